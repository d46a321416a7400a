# Fails where CUDA source puts a loop straight under `if constexpr (...)` without braces:
#
#     if constexpr (kStream)
#         for (...) { ... }
#
# nvcc 13.0.88 drops the statements after such a discarded branch inside a lambda in
# device code (for or while with a braced body; a five-line kernel of that shape compiled
# to a bare `ret`), and the host compiler gets it right, so only the GPU shows it
# (src/cuda/batchnorm.cu, channel_nchw). Braces around the loop avoid it.
#
# -DFIXTURE=<file> with one such loop must give exactly one hit (the scan can fail);
# -DROOT=<dir>: every .cu, .cuh and .hpp under it must give none.
function(scan file out)
  file(READ "${file}" text)
  string(REPLACE ";" "<semicolon>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(hits "")
  set(pending "")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "^[ \t]*$" OR line MATCHES "^[ \t]*(#pragma|//)")
      continue()
    endif()
    if(pending AND line MATCHES "^[ \t]*(for|while|do)([ \t(]|$)")
      list(APPEND hits "${file}:${pending}")
    endif()
    set(pending "")
    if(line MATCHES "if[ \t]+constexpr[ \t]*\\(" AND NOT line MATCHES "[{;][ \t]*(//.*)?$")
      set(pending ${n})
    endif()
  endforeach()
  set(${out} "${hits}" PARENT_SCOPE)
endfunction()

scan("${FIXTURE}" fixture_hits)
list(LENGTH fixture_hits nf)
if(NOT nf EQUAL 1)
  message(FATAL_ERROR "the scan found ${nf} unbraced loops in ${FIXTURE}, not 1")
endif()
file(GLOB_RECURSE sources "${ROOT}/*.cu" "${ROOT}/*.cuh" "${ROOT}/*.hpp")
set(all "")
foreach(f IN LISTS sources)
  scan("${f}" h)
  list(APPEND all ${h})
endforeach()
if(all)
  string(REPLACE ";" "\n  " shown "${all}")
  message(FATAL_ERROR "a loop straight under `if constexpr` without braces (nvcc drops what follows "
                      "it in a lambda; brace the loop):\n  ${shown}")
endif()
