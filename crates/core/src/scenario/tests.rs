//! Unit tests of the scenario format and the expectation evaluator.
