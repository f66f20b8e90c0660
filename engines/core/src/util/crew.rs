//! Crews: the threads that join the calling thread on a batch step.
//!
//! A crew of `n` is the calling thread plus `n - 1` workers of this process, started on
//! first use and kept. [`Crew::run`] hands every worker one piece of work (a closure
//! that takes parts from shared queues until none is left, so a worker that comes late
//! finds nothing and leaves) and runs it on the calling thread too; it returns once no
//! worker is inside it, so the work may borrow the caller's stack. The work is told who
//! runs it (0: the caller, `k`: worker `k`), so a caller can give each thread the same
//! share at every step.
//!
//! Why not a rayon pool: its workers sleep a few microseconds after their last job, and
//! on a virtual machine waking a sleeping worker took 100-170 us (a halted virtual CPU
//! the host must reschedule); a 256-row step of 16 KB masks takes 105 us on one thread,
//! so the worker mostly came after the caller had done every row, and two threads were
//! slower than one (115-125 us). A crew's workers spin for [`SPIN`] after their last
//! job, yielding their core to any other runnable thread, before they sleep: steps that
//! follow each other (a serving loop, a benchmark) find them awake, and the wake-up of
//! a sleeping one is paid after a pause of more than [`SPIN`] only.
//!
//! Safety of the borrowed work: a worker counts itself in (`active`) before it reads the
//! job, and the caller clears the job before it waits for `active` to fall to zero (all
//! sequentially consistent). A worker that read the job is therefore counted before the
//! caller's wait, which outlasts it; one counted in after the job was cleared reads no
//! job, or the next one. The clearing and the wait run in a guard's `drop`, so a panic on
//! the calling thread still waits for the workers; a panic on a worker is caught and
//! reported to the caller as an error.
//!
//! Two callers at once (the GIL is released during a batch): the second finds the crew
//! busy and runs its work alone, on its own thread.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use crate::error::Error;

/// How long a worker stays awake after its last job: longer than the pause between the
/// steps of a busy serving loop (the Python of a 256-row step, about 100 us), short
/// enough that an idle process gives its cores back at once.
pub const SPIN: Duration = Duration::from_millis(2);

/// The work of one step, called with the runner's number: the workers see the address
/// of this reference on the caller's stack, or null between steps.
type Work<'a> = &'a (dyn Fn(usize) + Sync);

struct Shared {
    /// Bumped for each job; a worker waits for it to move.
    epoch: AtomicU64,
    job: AtomicPtr<Work<'static>>,
    active: AtomicUsize,
    panicked: AtomicBool,
    sleepers: AtomicUsize,
    bell: (Mutex<()>, Condvar),
}

/// The calling thread and `workers` threads (see the module doc).
pub struct Crew {
    shared: Arc<Shared>,
    busy: Mutex<()>,
    workers: usize,
}

impl Shared {
    /// The worker's loop: wait for a new epoch, run its job if one is posted, again.
    fn serve(&self, me: usize) {
        // 0, not the epoch now: a job posted before this thread got going is its first.
        let mut seen = 0;
        loop {
            seen = self.wait_past(seen);
            self.active.fetch_add(1, SeqCst);
            let job = self.job.load(SeqCst);
            if !job.is_null() {
                // SAFETY: counted in `active` before reading a non-null job, so the
                // caller that posted it is still waiting in `Posted::drop`.
                let work: Work<'_> = unsafe { *job };
                if catch_unwind(AssertUnwindSafe(|| work(me))).is_err() {
                    self.panicked.store(true, SeqCst);
                }
            }
            self.active.fetch_sub(1, SeqCst);
        }
    }

    /// The epoch once it differs from `seen`: spinning for [`SPIN`], then asleep.
    fn wait_past(&self, seen: u64) -> u64 {
        let since = Instant::now();
        let mut turns = 0u32;
        loop {
            let now = self.epoch.load(SeqCst);
            if now != seen {
                return now;
            }
            turns += 1;
            if turns.is_multiple_of(64) {
                if since.elapsed() > SPIN {
                    break;
                }
                std::thread::yield_now();
            }
            std::hint::spin_loop();
        }
        let (lock, bell) = &self.bell;
        let mut guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        self.sleepers.fetch_add(1, SeqCst);
        let mut now = self.epoch.load(SeqCst);
        while now == seen {
            guard = bell.wait(guard).unwrap_or_else(|p| p.into_inner());
            now = self.epoch.load(SeqCst);
        }
        self.sleepers.fetch_sub(1, SeqCst);
        now
    }

    fn ring(&self) {
        if self.sleepers.load(SeqCst) > 0 {
            let _guard = self.bell.0.lock().unwrap_or_else(|p| p.into_inner());
            self.bell.1.notify_all();
        }
    }
}

/// A posted job: dropping it clears the job and waits until no worker is inside.
struct Posted<'a>(&'a Shared);

impl Drop for Posted<'_> {
    fn drop(&mut self) {
        self.0.job.store(std::ptr::null_mut(), SeqCst);
        while self.0.active.load(SeqCst) != 0 {
            std::hint::spin_loop();
        }
    }
}

impl Crew {
    fn start(threads: usize) -> Result<Crew, Error> {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            job: AtomicPtr::new(std::ptr::null_mut()),
            active: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            bell: (Mutex::new(()), Condvar::new()),
        });
        let workers = threads.saturating_sub(1);
        for k in 0..workers {
            let mine = shared.clone();
            std::thread::Builder::new()
                .name(format!("tokensdfa-crew{threads}-{k}"))
                .spawn(move || mine.serve(k + 1))
                .map_err(|e| Error::Option(format!("cannot start {threads} threads: {e}")))?;
        }
        Ok(Crew {
            shared,
            busy: Mutex::new(()),
            workers,
        })
    }

    /// Run `work` on the calling thread and on every worker (see the module doc); an
    /// error if it panicked on a worker.
    pub fn run(&self, work: &(dyn Fn(usize) + Sync)) -> Result<(), Error> {
        let Ok(_turn) = self.busy.try_lock() else {
            work(0);
            return Ok(());
        };
        if self.workers == 0 {
            work(0);
            return Ok(());
        }
        let shared = &*self.shared;
        shared.panicked.store(false, SeqCst);
        let slot: Work<'_> = work;
        {
            // SAFETY: the job is cleared and waited out by `posted`'s drop before
            // `slot` (and what `work` borrows) goes out of scope.
            let erased = &slot as *const Work<'_> as *mut Work<'static>;
            shared.job.store(erased, SeqCst);
            let _posted = Posted(shared);
            shared.epoch.fetch_add(1, SeqCst);
            shared.ring();
            work(0);
        }
        if shared.panicked.load(SeqCst) {
            return Err(Error::Option("a batch thread panicked".into()));
        }
        Ok(())
    }
}

type Crews = Option<(u32, FxHashMap<usize, Arc<Crew>>)>;

/// The crew of `threads` threads in all (the caller included), started on first use.
/// A forked child starts its own: its parent's workers did not follow it.
pub fn crew(threads: usize) -> Result<Arc<Crew>, Error> {
    static CREWS: Mutex<Crews> = Mutex::new(None);
    let pid = std::process::id();
    let mut slot = CREWS.lock().unwrap_or_else(|p| p.into_inner());
    if slot.as_ref().is_some_and(|(owner, _)| *owner != pid) {
        if let Some(inherited) = slot.take() {
            // Their threads live in the parent; a drop must not wait for them.
            std::mem::forget(inherited);
        }
    }
    let (_, crews) = slot.get_or_insert_with(|| (pid, FxHashMap::default()));
    if let Some(crew) = crews.get(&threads) {
        return Ok(crew.clone());
    }
    let crew = Arc::new(Crew::start(threads.max(1))?);
    crews.insert(threads, crew.clone());
    Ok(crew)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_is_done_once_by_the_caller_and_the_workers() {
        let crew = crew(3).unwrap();
        for round in 0..200 {
            let parts: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
            let next = AtomicUsize::new(0);
            crew.run(&|_| loop {
                let i = next.fetch_add(1, SeqCst);
                let Some(p) = parts.get(i) else { break };
                p.fetch_add(1, SeqCst);
            })
            .unwrap();
            assert!(parts.iter().all(|p| p.load(SeqCst) == 1), "round {round}");
            if round % 50 == 0 {
                std::thread::sleep(SPIN * 2); // the workers fall asleep and are woken
            }
        }
    }

    #[test]
    fn a_panic_on_a_worker_is_an_error_and_the_crew_goes_on() {
        let crew = crew(5).unwrap(); // a size no other test uses: it must not be busy
        let result = crew.run(&|me| {
            if me != 0 {
                panic!("worker {me}");
            }
            std::thread::sleep(Duration::from_millis(20));
        });
        assert!(result.is_err());
        assert!(crew.run(&|_| {}).is_ok());
    }
}
