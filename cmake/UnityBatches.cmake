# shimkeeper_unity_batches(OUT NAME SIZE BASE SOURCE...): writes the SOURCEs, SIZE at a time, into
# batch files (unity_batches/NAME_<n>.cpp in the current build folder) that include each one by
# its path relative to BASE, and sets OUT to the batch files. BASE must be on the include path of
# the target that compiles them.
#
# Written here rather than by CMake's UNITY_BUILD: CMake 3.25 (Debian 12's) includes each file by
# its absolute path, so that a clone in another folder (CI's) missed the compiler cache for every
# batch (UNITY_BUILD_RELOCATABLE needs CMake 3.32). These batches are the same text in every clone.
# file(CONFIGURE) rewrites a batch only when its text changes, so a configure run alone
# recompiles nothing.
function(shimkeeper_unity_batches out name size base)
  set(batches)
  set(lines)
  set(count 0)
  list(LENGTH ARGN total)
  foreach(src IN LISTS ARGN)
    file(RELATIVE_PATH relative ${base} ${src})
    string(APPEND lines "#include \"${relative}\"\n")
    math(EXPR count "${count} + 1")
    math(EXPR in_batch "${count} % ${size}")
    if(in_batch EQUAL 0 OR count EQUAL total)
      list(LENGTH batches index)
      set(batch ${CMAKE_CURRENT_BINARY_DIR}/unity_batches/${name}_${index}.cpp)
      file(CONFIGURE OUTPUT ${batch} CONTENT "${lines}" @ONLY)
      list(APPEND batches ${batch})
      set(lines)
    endif()
  endforeach()
  set(${out} ${batches} PARENT_SCOPE)
endfunction()
