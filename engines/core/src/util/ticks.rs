//! A cheap monotonic clock for timing many short steps (the lazy DFA's transitions)
//! without a clock read costing as much as the step.

use std::time::Instant;

/// A cheap monotonic tick count (the CPU's time-stamp counter on x86-64, a clock read
/// elsewhere), for timing the many short determinization steps without a clock read
/// costing as much as the step.
#[inline]
pub(crate) fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: reading the time-stamp counter has no preconditions.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Seconds per tick, measured once (a 2 ms calibration against the clock).
pub(crate) fn seconds_per_tick() -> f64 {
    static CAL: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *CAL.get_or_init(|| {
        let (t0, c0) = (Instant::now(), ticks());
        while t0.elapsed().as_micros() < 2000 {
            std::hint::spin_loop();
        }
        let ticks = ticks().wrapping_sub(c0).max(1);
        t0.elapsed().as_secs_f64() / ticks as f64
    })
}
