//! What the kernel gave this process: `vdsotime info` (the image, its symbols, the path
//! of each call, the machine) and `vdsotime dump` (the image as an ELF file).

pub mod dump;
pub mod info;
