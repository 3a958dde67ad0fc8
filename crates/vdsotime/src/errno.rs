//! `Errno`: the kernel's error number as a value, with its name.

use core::fmt;

/// An error number exactly as the kernel returned it (`EINVAL`, `EPERM`, ...).
///
/// ```
/// let e = vdsotime::clock_gettime(vdsotime::ClockId::from_raw(-1)).unwrap_err();
/// assert_eq!(e, vdsotime::Errno::EINVAL);
/// assert_eq!(e.name(), "EINVAL");
/// assert_eq!(e.raw(), 22);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Errno(i32);

macro_rules! errnos {
    ($($name:ident),* $(,)?) => {
        impl Errno {
            $(
                #[doc = concat!("`", stringify!($name), "` as the kernel numbers it on this architecture.")]
                pub const $name: Errno = Errno(linux_raw_sys::errno::$name as i32);
            )*

            /// The symbolic name (`"EINVAL"`), or `"E?"` for a number this crate does not name.
            ///
            /// # Example
            ///
            /// ```
            /// use vdsotime::Errno;
            /// assert_eq!(Errno::ENODEV.name(), "ENODEV");
            /// assert_eq!(Errno::from_raw(4000).name(), "E?");
            /// ```
            pub const fn name(self) -> &'static str {
                $( if self.0 == Self::$name.0 { return stringify!($name); } )*
                "E?"
            }
        }
    };
}

errnos!(
    EPERM, ENOENT, ESRCH, EINTR, EIO, EBADF, EAGAIN, ENOMEM, EACCES, EFAULT, EBUSY, EINVAL, ENFILE,
    EMFILE, ENOTTY, ERANGE, ENOSYS, EOVERFLOW, ENODEV, EOPNOTSUPP,
);

impl Errno {
    /// Wraps a positive error number.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(vdsotime::Errno::from_raw(22), vdsotime::Errno::EINVAL); // on every architecture
    /// ```
    pub const fn from_raw(raw: i32) -> Errno {
        Errno(raw)
    }

    /// The positive error number.
    ///
    /// # Example
    ///
    /// ```
    /// let e = vdsotime::Errno::EINVAL;
    /// assert_eq!(vdsotime::Errno::from_raw(e.raw()), e);
    /// ```
    pub const fn raw(self) -> i32 {
        self.0
    }

    /// Decodes a raw kernel return value: `-4095..=-1` is `-errno`, anything else is success.
    #[inline]
    pub(crate) const fn from_ret(ret: isize) -> Option<Errno> {
        if ret < 0 && ret >= -4095 {
            Some(Errno(-ret as i32))
        } else {
            None
        }
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.name(), self.0)
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (errno {})", self.name(), self.0)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Errno {}

#[cfg(feature = "std")]
impl From<Errno> for std::io::Error {
    fn from(e: Errno) -> Self {
        std::io::Error::from_raw_os_error(e.0)
    }
}
