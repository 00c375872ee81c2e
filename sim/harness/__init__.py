"""Golden harnesses (pairs, framers, fabrics), scenarios, the lockstep checkers and the ghost meter:
what the tests, experiments and bench drive.
"""
