//! Shared helpers for project-level tests.
