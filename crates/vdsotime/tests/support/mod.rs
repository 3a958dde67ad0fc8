//! Test support shared by the core's integration tests.

pub mod child;
pub mod elf_builder;
pub mod kernel;
pub mod process;
pub mod skip;
pub mod strace;
