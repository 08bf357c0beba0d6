# The torch Pythons that every test of a real DDP job runs under, as
# `label|python`: the PyPI wheel that scripts/setup.sh installs into .venv (the
# primary platform) and Debian's python3-torch. The one place they are named.
#
# Both are always registered: setup.sh installs both and CI runs both, so a
# missing interpreter must fail its tests (ctest: "Could not find executable"),
# never silently shrink the matrix.
set(DDPSCOPE_TORCH_PYTHONS
  "pypi|${PROJECT_SOURCE_DIR}/.venv/bin/python"
  "debian|/usr/bin/python3")

foreach(entry ${DDPSCOPE_TORCH_PYTHONS})
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 1 python)
  if(NOT EXISTS "${python}")
    message(WARNING "ddpscope: torch Python ${python} is missing; its tests will fail "
                    "(run scripts/setup.sh)")
  endif()
endforeach()

# ddpscope_add_torch_tests(GROUP CASE SCRIPT [WHOLE_SCRIPT] [TIMEOUT S] [RUN_SERIAL]
#                          [SKIPPABLE] [ENVIRONMENT VAR=VALUE...])
# SKIPPABLE: exit 77 means Skipped (tests/support/ctest_unittest.py).
#
# Adds `GROUP[label]: CASE` for each torch Python, running `python SCRIPT CASE`
# (a unittest case), or `python SCRIPT` with WHOLE_SCRIPT (CASE only names it).
# The environment is a list, so it has its own keyword rather than going
# through a generic property list, which would split it.
function(ddpscope_add_torch_tests group case script)
  cmake_parse_arguments(arg "WHOLE_SCRIPT;RUN_SERIAL;SKIPPABLE" "TIMEOUT" "ENVIRONMENT" ${ARGN})
  set(script_args "${case}")
  if(arg_WHOLE_SCRIPT)
    set(script_args)
  endif()
  foreach(entry ${DDPSCOPE_TORCH_PYTHONS})
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 label)
    list(GET parts 1 python)
    set(name "${group}[${label}]: ${case}")
    add_test(NAME "${name}" COMMAND ${python} ${script} ${script_args})
    # COST: the torch jobs (10-60 s each, most of the suite's time) start
    # before the C++ cases (a fraction of a second each), which then fill both
    # cores to the end instead of one long job running alone there. A fresh
    # clone has no timings of its own for ctest to order by.
    set_tests_properties("${name}" PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}" COST 1000)
    if(arg_TIMEOUT)
      set_tests_properties("${name}" PROPERTIES TIMEOUT ${arg_TIMEOUT})
    endif()
    if(arg_RUN_SERIAL)
      set_tests_properties("${name}" PROPERTIES RUN_SERIAL TRUE)
    endif()
    if(arg_SKIPPABLE)
      set_tests_properties("${name}" PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endforeach()
endfunction()
