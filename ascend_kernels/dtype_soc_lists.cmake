# The dtype and SoC table (include/ascend_kernels/dtype_soc_table.h) as CMake lists, read at
# configure time by running dtype_soc_lists.in through the C++ preprocessor; a change to the
# table re-runs the configuration. Sets, in the including scope:
#   JT_KERNEL_DTYPES             the kernel dtypes' names (entry suffixes), in the table's order
#   JT_SOCS                      the SoC rows' names
#   JT_SOC_<Name>_CODE           a SoC's code (SocVersion)
#   JT_SOC_<Name>_DEVICES        its device-name / SOC_VERSION prefixes (a list; empty: no NPU build)
#   JT_SOC_<Name>_SOC_VERSION    the SOC_VERSION its NPU build names by default
#   JT_DEFAULT_SOC               the default SoC's name
# and defines jt_write_launch_includes(FILE): FILE includes aclrtlaunch_<entry>.h of every entry.
set(_jt_lists_dir "${CMAKE_CURRENT_LIST_DIR}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${_jt_lists_dir}/include/ascend_kernels/dtype_soc_table.h" "${_jt_lists_dir}/dtype_soc_lists.in")
execute_process(
  COMMAND "${CMAKE_CXX_COMPILER}" -E -P -x c++ "-I${_jt_lists_dir}/include"
          "${_jt_lists_dir}/dtype_soc_lists.in"
  OUTPUT_VARIABLE _jt_out ERROR_VARIABLE _jt_err RESULT_VARIABLE _jt_rc)
string(REGEX MATCH "DTYPE_SOC_LISTS:[^\n]*" _jt_line "${_jt_out}")
if(NOT _jt_rc EQUAL 0 OR NOT _jt_line)
  message(FATAL_ERROR "cannot read the dtype and SoC table (${_jt_lists_dir}/dtype_soc_lists.in): ${_jt_err}")
endif()

set(JT_KERNEL_DTYPES "")
string(REGEX MATCHALL "@dtype [A-Za-z0-9_]+" _jt_rows "${_jt_line}")
foreach(_jt_row IN LISTS _jt_rows)
  string(REGEX REPLACE "^@dtype " "" _jt_name "${_jt_row}")
  list(APPEND JT_KERNEL_DTYPES "${_jt_name}")
endforeach()

set(JT_SOCS "")
string(REGEX MATCHALL "@soc [A-Za-z0-9_]+ [0-9]+ \"[^\"]*\" \"[^\"]*\"" _jt_rows "${_jt_line}")
foreach(_jt_row IN LISTS _jt_rows)
  string(REGEX MATCH "^@soc ([A-Za-z0-9_]+) ([0-9]+) \"([^\"]*)\" \"([^\"]*)\"" _ "${_jt_row}")
  list(APPEND JT_SOCS "${CMAKE_MATCH_1}")
  set(JT_SOC_${CMAKE_MATCH_1}_CODE "${CMAKE_MATCH_2}")
  separate_arguments(JT_SOC_${CMAKE_MATCH_1}_DEVICES UNIX_COMMAND "${CMAKE_MATCH_3}")
  set(JT_SOC_${CMAKE_MATCH_1}_SOC_VERSION "${CMAKE_MATCH_4}")
endforeach()
string(REGEX MATCH "@default ([A-Za-z0-9_]+)" _ "${_jt_line}")
set(JT_DEFAULT_SOC "${CMAKE_MATCH_1}")
if(NOT JT_KERNEL_DTYPES OR NOT JT_SOCS OR NOT JT_DEFAULT_SOC)
  message(FATAL_ERROR "the dtype and SoC table read as no rows: ${_jt_line}")
endif()

function(jt_write_launch_includes file)
  set(_text "// Generated from the dtype table (ascend_kernels/dtype_soc_lists.cmake).\n")
  foreach(_dtype IN LISTS JT_KERNEL_DTYPES)
    string(APPEND _text "#include \"aclrtlaunch_relu_grad_${_dtype}.h\"\n"
                        "#include \"aclrtlaunch_threshold_grad_v2_d_${_dtype}.h\"\n")
  endforeach()
  file(CONFIGURE OUTPUT "${file}" CONTENT "${_text}" @ONLY)  # rewritten only when it changes
endfunction()
