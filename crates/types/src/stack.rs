//! The stack guard: recursive code over statements (binding, evaluation, planning) asks
//! [`check`] before it goes one level deeper, and gets MariaDB's error 1436 ("Thread stack
//! overrun") instead of running off the end of the thread's stack, which would abort the
//! whole process.
//!
//! The guard reads the calling thread's stack bounds once (`pthread_getattr_np`) and
//! compares the current stack pointer with the low end plus [`RESERVE`], the room a
//! single level may use below a check (a RocksDB call, a regex compilation, formatting).
//! Connection threads are created with `thread_stack` bytes of stack (MariaDB's option),
//! so how deep a statement may nest grows with that option, as in MariaDB.

use std::cell::Cell;

use crate::{code, SqlError};

/// Stack a level may still use after a successful [`check`].
pub const RESERVE: usize = 192 * 1024;

thread_local! {
    /// (lowest usable address, size) of this thread's stack; (0, 0) when unknown.
    static BOUNDS: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

#[cfg(target_os = "linux")]
fn read_bounds() -> (usize, usize) {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is destroyed after
    // the two values are read from it.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return (0, 0);
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let r = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        // The guard page(s) sit at the low end of the reported range.
        let mut guard: libc::size_t = 0;
        let _ = libc::pthread_attr_getguardsize(&attr, &mut guard);
        libc::pthread_attr_destroy(&mut attr);
        if r != 0 {
            return (0, 0);
        }
        (addr as usize + guard, size - guard.min(size))
    }
}

#[cfg(not(target_os = "linux"))]
fn read_bounds() -> (usize, usize) {
    (0, 0)
}

fn bounds() -> (usize, usize) {
    BOUNDS.with(|b| match b.get() {
        Some(v) => v,
        None => {
            let v = read_bounds();
            b.set(Some(v));
            v
        }
    })
}

#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// The calling thread's stack size in bytes (0 when it cannot be read).
pub fn size() -> usize {
    bounds().1
}

/// Bytes of this thread's stack in use at the caller (0 on a stack of another kind, such
/// as one a parse of a huge statement runs on).
pub fn used() -> usize {
    let (low, size) = bounds();
    let sp = stack_pointer();
    if sp < low || sp > low + size {
        return 0;
    }
    low + size - sp
}

/// Error 1436 as MariaDB words it: `needed` more bytes were wanted than the stack has.
pub fn overrun(needed: usize) -> SqlError {
    SqlError::from_code(
        code::ER_STACK_OVERRUN_NEED_MORE,
        format!(
            "Thread stack overrun:  {} bytes used of a {} byte stack, and {} bytes needed. \
             Consider increasing the thread_stack system variable.",
            used(),
            size(),
            needed
        ),
    )
}

/// Ok while at least [`RESERVE`] bytes of stack remain below the caller; error 1436 when
/// not. Threads whose stack cannot be read are not checked.
#[inline]
pub fn check() -> Result<(), SqlError> {
    let (low, size) = bounds();
    if size == 0 {
        return Ok(());
    }
    let sp = stack_pointer();
    // Below the reserve, and on this thread's stack (not a stack of another kind).
    if sp < low + RESERVE && sp >= low.saturating_sub(1 << 20) {
        return Err(overrun(RESERVE));
    }
    Ok(())
}

/// Ok while `bytes` more than [`RESERVE`] remain below the caller: for code about to build
/// something that other code will walk `bytes` deep without checks of its own.
pub fn check_room(bytes: usize) -> Result<(), SqlError> {
    let (low, size) = bounds();
    if size == 0 {
        return Ok(());
    }
    if stack_pointer().saturating_sub(low) < RESERVE.saturating_add(bytes) {
        return Err(overrun(RESERVE.saturating_add(bytes)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: usize) -> Result<usize, SqlError> {
        check()?;
        // A frame of a few hundred bytes per level.
        let pad = std::hint::black_box([n as u8; 512]);
        Ok(depth(n + 1)?.max(pad[n % 512] as usize))
    }

    #[test]
    fn deep_recursion_is_refused_before_the_end_of_the_stack() {
        let t = std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(|| {
                assert!(size() >= 1024 * 1024 - 64 * 1024, "size {}", size());
                depth(0)
            })
            .unwrap();
        let e = t.join().unwrap().unwrap_err();
        assert_eq!(e.code, 1436);
        assert_eq!(e.state, "HY000");
        assert!(
            e.message.starts_with("Thread stack overrun:"),
            "{}",
            e.message
        );
    }

    #[test]
    fn shallow_calls_pass() {
        assert!(check().is_ok());
        assert!(used() > 0 && used() < size());
    }
}
