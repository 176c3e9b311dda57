//! The integration-test harness: see `harness`.
