# Turns api_names.txt (one cuDNN function per line, generated from include/ by
# tools/gen/gen_api.py) into a C array initializer for odnn doctor's symbol audit.
file(STRINGS "${IN}" names)
set(text "// Generated from ${IN} by tools/odnn/embed_names.cmake. Do not edit.\n")
foreach(n IN LISTS names)
  string(STRIP "${n}" n)
  if(n)
    string(APPEND text "\"${n}\",\n")
  endif()
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
