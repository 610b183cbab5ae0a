# Writes OUTPUT: a C++ source defining `std::string_view NAMESPACE::FUNCTION()` that returns the
# bytes of INPUT. Run as `cmake -DINPUT=... -DOUTPUT=... -DNAMESPACE=... -DFUNCTION=... -P`.
file(READ "${INPUT}" content)
set(delim "clover_embed")
string(FIND "${content}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delim}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_text.cmake; do not edit.\n"
  "#include <string_view>\n\nnamespace ${NAMESPACE} {\n\n"
  "std::string_view ${FUNCTION}() {\n  static constexpr char kText[] = R\"${delim}(${content})${delim}\";\n"
  "  return {kText, sizeof kText - 1};\n}\n\n}  // namespace ${NAMESPACE}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
