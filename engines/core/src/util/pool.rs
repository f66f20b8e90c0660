//! Thread pools of this process, one per size, built on first use and shared.
//!
//! Not rayon's global pool: a process forked after a pool started inherits its
//! bookkeeping but none of its threads, so work sent to it in the child would wait
//! forever (the differ forks a child per spec after building indexes itself). Each pool is
//! therefore kept with the id of the process that started it, and a child starts its own.

use std::sync::{Arc, Mutex};

use rayon::ThreadPool;
use rustc_hash::FxHashMap;

use crate::error::Error;

type Pools = Option<(u32, FxHashMap<usize, Arc<ThreadPool>>)>;

/// The pool of `threads` workers (rayon's default size, one per core, for `None`).
pub fn pool(threads: Option<usize>) -> Result<Arc<ThreadPool>, Error> {
    static POOLS: Mutex<Pools> = Mutex::new(None);
    let pid = std::process::id();
    let mut slot = POOLS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if slot.as_ref().is_some_and(|(owner, _)| *owner != pid) {
        if let Some(inherited) = slot.take() {
            // Their threads live in the parent; dropping them here would wait forever.
            std::mem::forget(inherited);
        }
    }
    let (_, pools) = slot.get_or_insert_with(|| (pid, FxHashMap::default()));
    let key = threads.unwrap_or(0);
    if let Some(pool) = pools.get(&key) {
        return Ok(pool.clone());
    }
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        builder = builder.num_threads(n.max(1));
    }
    let pool = Arc::new(
        builder
            .build()
            .map_err(|e| Error::Option(format!("cannot start {key} threads: {e}")))?,
    );
    pools.insert(key, pool.clone());
    Ok(pool)
}
