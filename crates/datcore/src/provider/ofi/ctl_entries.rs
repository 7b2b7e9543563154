//! Who uses each entry of an IA's control AV (`FI_EP_RDM`; see rdm.rs).
//!
//! An entry names a PSP or a peer's control endpoint. Connections hold it (the PSP's until the
//! answer, the peer's until the endpoint is freed), and so does every control message that
//! names it, from its send until its completion or failure (waiting behind `-FI_EAGAIN`
//! included). It leaves the AV only once nothing uses it: libfabric 1.17's rxm dereferences
//! freed memory when a send names a removed entry, and rxm and shm drop their connection to
//! the peer at every `fi_av_remove` of its address, even one that leaves the entry in the AV
//! (their own count of inserts). So an address is inserted once while it is in use, and
//! removed once.
//!
//! Pure bookkeeping: the caller inserts and removes under the lock that guards this table.

use std::collections::HashMap;

struct Entry {
    addr: Vec<u8>,
    /// Connections (and answers being sent) holding the entry.
    holders: u32,
    /// Control messages naming it, waiting or in flight.
    messages: u32,
}

/// The control AV's entries by `fi_addr_t`.
#[derive(Default)]
pub(crate) struct CtlEntries {
    by_fa: HashMap<u64, Entry>,
}

impl CtlEntries {
    /// The entry already made for `addr`, held once more; None: the caller inserts it and
    /// tells [`CtlEntries::inserted`].
    pub fn hold(&mut self, addr: &[u8]) -> Option<u64> {
        let (fa, e) = self.by_fa.iter_mut().find(|(_, e)| e.addr == addr)?;
        e.holders += 1;
        Some(*fa)
    }

    /// `addr` was inserted as `fa`, held once.
    pub fn inserted(&mut self, addr: &[u8], fa: u64) {
        self.by_fa.insert(fa, Entry { addr: addr.to_vec(), holders: 1, messages: 0 });
    }

    /// A control message names `fa` from now until [`CtlEntries::message_over`]. False if
    /// `fa` is no entry (the message must not be sent).
    pub fn message(&mut self, fa: u64) -> bool {
        match self.by_fa.get_mut(&fa) {
            Some(e) => {
                e.messages += 1;
                true
            }
            None => false,
        }
    }

    /// A holder lets `fa` go. True: nothing uses it any more, the caller removes it from the AV.
    pub fn let_go(&mut self, fa: u64) -> bool {
        self.drop_use(fa, |e| &mut e.holders)
    }

    /// A message naming `fa` completed, failed or was dropped. True: nothing uses it any more,
    /// the caller removes it from the AV.
    pub fn message_over(&mut self, fa: u64) -> bool {
        self.drop_use(fa, |e| &mut e.messages)
    }

    fn drop_use(&mut self, fa: u64, count: impl Fn(&mut Entry) -> &mut u32) -> bool {
        let Some(e) = self.by_fa.get_mut(&fa) else { return false };
        let n = count(e);
        if *n == 0 {
            tracing::warn!(fa, "ofi: a control AV entry let go more often than held");
            return false;
        }
        *n -= 1;
        if e.holders > 0 || e.messages > 0 {
            return false;
        }
        self.by_fa.remove(&fa);
        true
    }

    /// Entries in the table (in the AV).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_fa.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_stays_while_a_message_names_it() {
        let mut t = CtlEntries::default();
        assert_eq!(t.hold(b"peer"), None);
        t.inserted(b"peer", 4);
        assert!(t.message(4));
        assert!(t.message(4));
        assert!(!t.let_go(4), "two messages still name it");
        assert!(!t.message_over(4));
        assert!(t.message_over(4), "the last message over: removed now");
        assert_eq!(t.len(), 0);
        assert!(!t.message(4), "a removed entry takes no message");
    }

    #[test]
    fn an_address_held_twice_is_inserted_and_removed_once() {
        let mut t = CtlEntries::default();
        assert_eq!(t.hold(b"peer"), None);
        t.inserted(b"peer", 2);
        assert_eq!(t.hold(b"peer"), Some(2), "the second connection to the peer shares the entry");
        assert!(t.message(2));
        assert!(!t.let_go(2));
        assert!(!t.message_over(2), "the other connection still holds it");
        assert!(t.let_go(2));
        assert_eq!(t.hold(b"peer"), None, "gone: inserted again when needed");
    }

    #[test]
    fn a_message_over_after_its_holder_let_go_removes_only_its_entry() {
        let mut t = CtlEntries::default();
        t.inserted(b"psp", 1);
        t.inserted(b"peer", 2);
        assert!(t.message(1));
        assert!(t.message(2));
        assert!(!t.let_go(1), "the request to the PSP is still in flight");
        assert!(!t.let_go(2));
        assert!(t.message_over(1));
        assert_eq!(t.len(), 1);
        assert!(t.message_over(2));
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn letting_go_more_often_than_held_removes_nothing() {
        let mut t = CtlEntries::default();
        t.inserted(b"peer", 3);
        assert!(t.message(3));
        assert!(!t.message_over(3));
        assert!(!t.message_over(3), "no message was left");
        assert!(t.let_go(3));
        assert!(!t.let_go(3), "an entry no longer there");
        assert!(!t.let_go(0));
    }
}
