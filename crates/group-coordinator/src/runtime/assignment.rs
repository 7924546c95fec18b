//! Server-side assignment: `perform_assignment`.
