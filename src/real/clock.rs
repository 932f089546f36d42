//! The one clock of a library run's history: the kernel's `CLOCK_MONOTONIC`, which every
//! process on the machine reads alike (Python's `time.monotonic_ns()`, Java's
//! `System.nanoTime()` on Linux, and this). Each client stamps its own lines with it as it acts,
//! so the history orders what the clients did as they did it, not as their lines happened to
//! reach the driver: a holder that says `releasing` before its delete is never judged to hold
//! past the next client's `acquired`, however late its pipe is read, and a late-read `acquired`
//! never hides an overlap.

/// Now, in nanoseconds of `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid, writable timespec; CLOCK_MONOTONIC is always available on Linux.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    assert_eq!(status, 0, "CLOCK_MONOTONIC is always readable");
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_moves_forward_with_instant() {
        let a = monotonic_ns();
        let start = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let inner = start.elapsed().as_nanos() as u64;
        let b = monotonic_ns();
        // Read around Instant's span, the same kernel clock's span can only be longer.
        assert!(inner >= 20_000_000 && b - a >= inner, "{} ns around {inner} ns", b - a);
    }
}
