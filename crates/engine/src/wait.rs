//! Blocking waits, announced to whoever schedules the calling thread.
//!
//! The server's thread pool (`thread_handling=pool-of-threads`) lets only
//! `thread_pool_size` statements run at once. A statement that blocks (on a row or metadata
//! lock, or on its group commit becoming durable) must give its turn to another one, as
//! MariaDB's `thd_wait_begin`/`thd_wait_end` do; otherwise a pool of one could deadlock on a
//! lock whose holder waits in the queue. The engine wraps each such wait in [`blocking`];
//! the server installs a per-thread [`WaitObserver`] that releases and re-takes the slot.
//! Without an observer (`one-thread-per-connection`, tests, tools) [`blocking`] just runs.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Told when the current thread starts and stops waiting.
pub trait WaitObserver {
    fn wait_begin(&self);
    fn wait_end(&self);
}

thread_local! {
    static OBSERVER: RefCell<Option<Rc<dyn WaitObserver>>> = const { RefCell::new(None) };
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Installs (or, with None, removes) the calling thread's observer.
pub fn set_observer(o: Option<Rc<dyn WaitObserver>>) {
    OBSERVER.with(|cell| *cell.borrow_mut() = o);
}

/// Runs `f`, a wait, between `wait_begin` and `wait_end` of the thread's observer. Nested
/// calls announce only the outermost wait.
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    let outer = DEPTH.with(|d| {
        let n = d.get();
        d.set(n + 1);
        n == 0
    });
    let o = if outer {
        OBSERVER.with(|cell| cell.borrow().clone())
    } else {
        None
    };
    if let Some(o) = &o {
        o.wait_begin();
    }
    // Ends the wait even when `f` unwinds.
    struct End(Option<Rc<dyn WaitObserver>>);
    impl Drop for End {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get() - 1));
            if let Some(o) = &self.0 {
                o.wait_end();
            }
        }
    }
    let _end = End(o);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log(RefCell<Vec<&'static str>>);
    impl WaitObserver for Log {
        fn wait_begin(&self) {
            self.0.borrow_mut().push("begin");
        }
        fn wait_end(&self) {
            self.0.borrow_mut().push("end");
        }
    }

    #[test]
    fn only_the_outermost_wait_is_announced() {
        let log = Rc::new(Log::default());
        set_observer(Some(log.clone()));
        let r = blocking(|| blocking(|| 7));
        assert_eq!(r, 7);
        assert_eq!(*log.0.borrow(), ["begin", "end"]);
        set_observer(None);
        blocking(|| ());
        assert_eq!(log.0.borrow().len(), 2);
    }
}
