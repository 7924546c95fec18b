//! Clocks: the system clock, and a manual clock whose `advance` fires due timers.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

/// Something whose due timers a clock can fire: a [`GroupCoordinator`](crate::GroupCoordinator)
/// registers itself with a clock that [drives timers](Clock::drives_timers).
pub trait TimerDriver: Send + Sync {
    /// The earliest armed deadline.
    fn next_deadline(&self) -> Option<i64>;
    /// Fires the earliest timer due at or before `now_ms`; false if none was due.
    fn fire_next_due(&self, now_ms: i64) -> bool;
}

/// Where a coordinator reads the time, in milliseconds.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time in milliseconds.
    fn now_ms(&self) -> i64;

    /// True when this clock fires timers itself (a manual clock), so the coordinator
    /// starts no timer thread and registers with [`register`](Self::register).
    fn drives_timers(&self) -> bool {
        false
    }

    /// Registers a coordinator whose timers this clock fires.
    fn register(&self, driver: Weak<dyn TimerDriver>) {
        drop(driver);
    }
}

/// Wall-clock time (milliseconds since the Unix epoch). The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

struct ManualState {
    drivers: Vec<Weak<dyn TimerDriver>>,
}

/// A clock for tests: time moves only by [`advance`](ManualClock::advance), which fires
/// every timer that falls due, in deadline order, before it returns. No test sleeps.
pub struct ManualClock {
    now: AtomicI64,
    state: Mutex<ManualState>,
    advancing: Mutex<()>,
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock").field("now_ms", &self.now_ms()).finish()
    }
}

impl ManualClock {
    /// A clock reading `start_ms`.
    pub fn new(start_ms: i64) -> ManualClock {
        ManualClock {
            now: AtomicI64::new(start_ms),
            state: Mutex::new(ManualState { drivers: Vec::new() }),
            advancing: Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ManualState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Moves time forward by `ms`, firing every timer due on the way: one at a time, in
    /// deadline order, with the clock reading each timer's deadline while it runs.
    pub fn advance(&self, ms: i64) {
        let _serial = self.advancing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let target = self.now_ms() + ms.max(0);
        loop {
            let drivers: Vec<_> = {
                let mut state = self.lock();
                state.drivers.retain(|d| d.strong_count() > 0);
                state.drivers.iter().filter_map(Weak::upgrade).collect()
            };
            let next = drivers
                .iter()
                .filter_map(|d| d.next_deadline().map(|t| (t, d)))
                .filter(|(t, _)| *t <= target)
                .min_by_key(|(t, _)| *t);
            let Some((deadline, driver)) = next else { break };
            self.now.fetch_max(deadline, Ordering::AcqRel);
            driver.fire_next_due(deadline.max(self.now_ms()));
        }
        self.now.store(target, Ordering::Release);
    }

    /// Sets the time without firing anything (for a coordinator's start time).
    pub fn set(&self, now_ms: i64) {
        self.now.store(now_ms, Ordering::Release);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::Acquire)
    }

    fn drives_timers(&self) -> bool {
        true
    }

    fn register(&self, driver: Weak<dyn TimerDriver>) {
        self.lock().drivers.push(driver);
    }
}
