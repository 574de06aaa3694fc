//! The running containers of each app and node: doubly linked lists threaded through the
//! container table's slots, so an allocation or a completion links or unlinks in constant time
//! (two ordered sets per container were a measurable share of the fast path at full scale).
//! The rare walks over a list (removing an app or a node, verification) sort what they collect,
//! so they see containers in id order as before.

use crate::lanes::Resource;
use weft_types::ContainerId;

use crate::engine::Engine;
use crate::objects::node::Container;
use crate::rules::Rules;

/// No slot.
const NIL: u32 = u32::MAX;

/// A container's neighbours in one list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    prev: u32,
    next: u32,
}

impl Default for Link {
    fn default() -> Link {
        Link {
            prev: NIL,
            next: NIL,
        }
    }
}

/// The head of one app's or node's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunList {
    head: u32,
    len: u32,
}

impl Default for RunList {
    fn default() -> RunList {
        RunList { head: NIL, len: 0 }
    }
}

impl RunList {
    /// How many containers are on the list.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }
}

/// Which of a container's two lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    App,
    Node,
}

fn link_mut(c: &mut Container, owner: Owner) -> &mut Link {
    match owner {
        Owner::App => &mut c.by_app,
        Owner::Node => &mut c.by_node,
    }
}

fn link(c: &Container, owner: Owner) -> Link {
    match owner {
        Owner::App => c.by_app,
        Owner::Node => c.by_node,
    }
}

impl<R: Rules> Engine<R> {
    fn list_mut(&mut self, c: &Container, owner: Owner) -> Option<&mut RunList> {
        match owner {
            Owner::App => self.apps.at_mut(c.app_slot).map(|a| &mut a.running),
            Owner::Node => self.nodes.at_mut(c.node_slot).map(|n| &mut n.running),
        }
    }

    /// Stores a new container and puts it at the head of its app's and its node's lists.
    /// Always inlined: with a second (cold) caller, recovery, the compiler stopped inlining it
    /// into `allocate`, and the full-scale meituan run lost about 9% of its CPS.
    #[inline(always)]
    pub(crate) fn add_container(&mut self, c: Container) {
        let (slot, _) = self.containers.insert_slot(c.id, c);
        for owner in [Owner::App, Owner::Node] {
            let Some(list) = self.list_mut(&c, owner) else {
                continue;
            };
            let old_head = list.head;
            list.head = slot;
            list.len += 1;
            if let Some(head) = self.containers.at_mut(old_head) {
                link_mut(head, owner).prev = slot;
            }
            if let Some(me) = self.containers.at_mut(slot) {
                *link_mut(me, owner) = Link {
                    prev: NIL,
                    next: old_head,
                };
            }
        }
    }

    /// Removes a container from the table and from both of its lists.
    pub(crate) fn take_container(&mut self, id: ContainerId) -> Option<Container> {
        let slot = self.containers.slot_of(&id)?;
        let c = *self.containers.at(slot)?;
        for owner in [Owner::App, Owner::Node] {
            let Link { prev, next } = link(&c, owner);
            match self.containers.at_mut(prev) {
                Some(p) => link_mut(p, owner).next = next,
                None => {
                    if let Some(list) = self.list_mut(&c, owner) {
                        list.head = next;
                    }
                }
            }
            if let Some(n) = self.containers.at_mut(next) {
                link_mut(n, owner).prev = prev;
            }
            if let Some(list) = self.list_mut(&c, owner) {
                list.len -= 1;
            }
        }
        self.containers.remove(&id)
    }

    fn list_containers(&self, list: RunList, owner: Owner) -> Vec<&Container> {
        let mut out = Vec::with_capacity(list.len());
        let mut cur = list.head;
        while let Some(c) = self.containers.at(cur) {
            out.push(c);
            cur = link(c, owner).next;
        }
        out
    }

    /// The ids on an app's or a node's list, ascending.
    pub(crate) fn container_ids(&self, list: RunList, owner: Owner) -> Vec<ContainerId> {
        let mut ids: Vec<ContainerId> = self
            .list_containers(list, owner)
            .iter()
            .map(|c| c.id)
            .collect();
        ids.sort_unstable();
        ids
    }
}

/// What one walk of an app's or node's list found, for verification ([`Engine::walk_list`]).
pub(crate) struct ListWalk {
    /// The sum of their sizes.
    pub(crate) total: Resource,
    /// How many containers the walk found (at most one more than the list counts: a longer
    /// walk, e.g. round a cycle, stops there).
    pub(crate) walked: usize,
    /// How many of them name another app (or node) as theirs.
    pub(crate) misowned: usize,
    /// Links that do not hold: a container whose back link does not name the one before it
    /// (the head's names none), or a forward link to a free slot.
    pub(crate) broken_links: usize,
}

impl<R: Rules> Engine<R> {
    /// Walks the list of the app (or node) in `slot` once, allocating nothing, and calls
    /// `each` with every container on it (verification: the walk checks the links too).
    pub(crate) fn walk_list(
        &self,
        list: RunList,
        owner: Owner,
        slot: u32,
        mut each: impl FnMut(&Container),
    ) -> ListWalk {
        let mut out = ListWalk {
            total: Resource::ZERO,
            walked: 0,
            misowned: 0,
            broken_links: 0,
        };
        let (mut before, mut cur) = (NIL, list.head);
        while out.walked <= list.len() {
            let Some(c) = self.containers.at(cur) else {
                if cur != NIL {
                    out.broken_links += 1;
                }
                break;
            };
            let here = link(c, owner);
            out.broken_links += usize::from(here.prev != before);
            out.misowned += usize::from(owner_slot(c, owner) != slot);
            out.total = out.total.saturating_add(c.size);
            out.walked += 1;
            each(c);
            (before, cur) = (cur, here.next);
        }
        out
    }

    /// Whether the container in table slot `slot` is properly linked on its `owner`'s list,
    /// looking at its neighbours only: each is a live container of the same owner linking
    /// back to it, and with none before it, it is its owner's head. With every container
    /// linked so and every owner's head and count right ([`Engine::head_holds`], a count of
    /// the table), each list is its owner's containers but for a detached cycle, which only a
    /// walk finds ([`Engine::walk_list`]).
    pub(crate) fn links_hold(&self, slot: u32, c: &Container, owner: Owner) -> bool {
        let Link { prev, next } = link(c, owner);
        let mine = owner_slot(c, owner);
        let next_holds = next == NIL
            || self
                .containers
                .at(next)
                .is_some_and(|n| link(n, owner).prev == slot && owner_slot(n, owner) == mine);
        let prev_holds = if prev == NIL {
            let head = match owner {
                Owner::App => self.apps.at(mine).map(|a| a.running.head),
                Owner::Node => self.nodes.at(mine).map(|n| n.running.head),
            };
            head == Some(slot)
        } else {
            self.containers
                .at(prev)
                .is_some_and(|p| link(p, owner).next == slot && owner_slot(p, owner) == mine)
        };
        next_holds && prev_holds
    }

    /// Whether the list of the app (or node) in `slot` starts right: empty with no head, or
    /// headed by a live container of its own with nothing before it.
    pub(crate) fn head_holds(&self, list: RunList, owner: Owner, slot: u32) -> bool {
        match self.containers.at(list.head) {
            None => list.head == NIL && list.len == 0,
            Some(c) => list.len > 0 && owner_slot(c, owner) == slot && link(c, owner).prev == NIL,
        }
    }
}

/// The table slot of the app (or node) a container names as its own.
pub(crate) fn owner_slot(c: &Container, owner: Owner) -> u32 {
    match owner {
        Owner::App => c.app_slot,
        Owner::Node => c.node_slot,
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
impl RunList {
    /// Makes the list count `by` more containers than it holds (tests corrupt it).
    pub(crate) fn miscount(&mut self, by: u32) {
        self.len += by;
    }
}
