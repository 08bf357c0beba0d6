"""unittest.main for ctest: a run whose every test was skipped exits 77, which
the test's SKIP_RETURN_CODE maps to "Skipped" — a check that needs root it
does not have must never count as passed."""
import sys
import unittest

SKIP_EXIT_CODE = 77


def main(argv=None):
    prog = unittest.main(argv=argv, exit=False, verbosity=2)
    result = prog.result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun and len(result.skipped) == result.testsRun:
        sys.exit(SKIP_EXIT_CODE)
    sys.exit(0)
