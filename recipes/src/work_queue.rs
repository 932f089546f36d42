//! A work queue: each client puts one item and then takes one. Asking for the lock is asking
//! for an item; holding it is processing the item taken, whose token is the item's sequence
//! number; releasing it is being done with it (`Mode::Take`, judged by `taken_at_most_once`).
//!
//! **Source.** ZooKeeper's recipes page, "Queues": producers create persistent sequential
//! `<q>/item-` nodes, a consumer lists them and takes the lowest by deleting it; a delete that
//! fails NoNode means another consumer took it first. kazoo's `Queue.get` is that loop (a
//! `client.retry` around list, get and delete).
//!
//! **What it does.** A client puts its item (a lost create is sent again: an item too many is
//! harmless), lists the queue with a watch and tries the lowest item. `queue` takes it with a
//! `multi`: the item's delete and the create of `<q>/taken-<n>` holding the client's name, one
//! transaction. When the reply is lost it reads `taken-<n>`: its own name means it took the
//! item; no node means the multi never applied (it tries again); another's name means another
//! took it.
//!
//! **What it gets wrong.** `queue`: nothing the model can show. Without the record a lost reply
//! to the delete cannot say who took the item:
//! - `queue-optimistic` takes a lost reply for success: when the delete was lost before the
//!   server applied it the item is still there, another consumer takes it too, and the item is
//!   processed twice (`taken_at_most_once`).
//! - `queue-lose-on-retry` deletes again, as kazoo's retry does: when the first delete was
//!   applied the second fails NoNode and the consumer takes it for another's, so the item is
//!   lost; with as many items as consumers, one waits forever (`eventual_acquire`).
//!
//! **What the model leaves out.** Item data and several items per client; a consumer whose
//! session expires stops.

use zklab_model::path;
use zklab_model::{
    Belief, CreateMode, Ctx, EventType, Input, Mode, Op, Property, Request, Response, SessionState, ZkError, ZkResult,
};

/// What comes before the counter in an item's name.
const ITEM: &str = "item-";
/// What comes before the item's counter in the name of the record of who took it.
const TAKEN: &str = "taken-";

/// How a consumer takes an item, and what it makes of a lost reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Take {
    /// A multi of the delete and the record of who took it; a lost reply is read back.
    Recorded,
    /// A delete; a lost reply is taken for success.
    Optimistic,
    /// A delete; after a lost reply the delete is sent again, NoNode meaning another took it.
    Retry,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Putting,
    Listing,
    /// No item: waiting for the queue to change.
    Waiting,
    /// Taking the item of this number.
    Taking(i32),
    /// The take's reply was lost: reading the record of who took it.
    Verifying(i32),
    Processing(i32),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkQueue {
    name: &'static str,
    path: String,
    take: Take,
    phase: Phase,
}

impl WorkQueue {
    pub fn new(name: &'static str, lock_path: &str, take: Take) -> Self {
        WorkQueue { name, path: lock_path.to_string(), take, phase: Phase::Idle }
    }

    fn item(&self, n: i32) -> String {
        path::join(&self.path, &format!("{ITEM}{}", path::sequence_suffix(n)))
    }

    fn record(&self, n: i32) -> String {
        path::join(&self.path, &format!("{TAKEN}{}", path::sequence_suffix(n)))
    }

    fn put(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Putting;
        out.push(Request::create(&path::join(&self.path, ITEM), CreateMode::PersistentSequential));
    }

    fn list(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Listing;
        out.push(Request::get_children(&self.path, true));
    }

    fn try_take(&mut self, ctx: &Ctx, n: i32, out: &mut Vec<Request>) {
        self.phase = Phase::Taking(n);
        out.push(match self.take {
            Take::Recorded => Request::Multi {
                ops: vec![
                    Op::Delete { path: self.item(n), version: -1 },
                    Op::Create { path: self.record(n), data: format!("c{}", ctx.client), mode: CreateMode::Persistent },
                ],
            },
            Take::Optimistic | Take::Retry => Request::delete(&self.item(n)),
        });
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: ZkResult, out: &mut Vec<Request>) {
        match (self.phase.clone(), request, result) {
            (_, _, Err(ZkError::SessionExpired)) => self.phase = Phase::Idle,
            (Phase::Putting, Request::Create { .. }, Ok(_)) => self.list(out),
            (Phase::Putting, Request::Create { .. }, Err(_)) => self.put(out),
            (Phase::Listing, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                match children.names().filter_map(|name| path::sequence_of(name, ITEM)).min() {
                    Some(n) => self.try_take(ctx, n, out),
                    None => self.phase = Phase::Waiting,
                }
            }
            (Phase::Listing, Request::GetChildren { .. }, Err(_)) => self.list(out),
            (Phase::Taking(n), _, Ok(_)) => self.phase = Phase::Processing(n),
            (Phase::Taking(n), _, Err(ZkError::ConnectionLoss)) => match self.take {
                Take::Recorded => {
                    self.phase = Phase::Verifying(n);
                    out.push(Request::get_data(&self.record(n), false));
                }
                Take::Optimistic => self.phase = Phase::Processing(n),
                Take::Retry => out.push(Request::delete(&self.item(n))),
            },
            // Another consumer took it first (NoNode), or its record is there (NodeExists).
            (Phase::Taking(_), _, Err(_)) => self.list(out),
            (Phase::Verifying(n), Request::GetData { .. }, Ok(Response::Data { data, .. })) => {
                match data == format!("c{}", ctx.client) {
                    true => self.phase = Phase::Processing(n),
                    false => self.list(out),
                }
            }
            // No record: the multi never applied, and the item may still be there.
            (Phase::Verifying(n), Request::GetData { .. }, Err(ZkError::NoNode)) => self.try_take(ctx, n, out),
            (Phase::Verifying(n), Request::GetData { .. }, Err(_)) => {
                out.push(Request::get_data(&self.record(n), false))
            }
            _ => {}
        }
    }
}

impl zklab_model::Recipe for WorkQueue {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.put(out),
            Input::Release if matches!(self.phase, Phase::Processing(_)) => self.phase = Phase::Idle,
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event) if self.phase == Phase::Waiting && event.kind == EventType::NodeChildrenChanged => {
                self.list(out)
            }
            // A library that dropped its watches says nothing more: look again.
            Input::State(SessionState::SyncConnected) if self.phase == Phase::Waiting => self.list(out),
            Input::State(SessionState::Expired) => self.phase = Phase::Idle,
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Processing(n) => Belief::Holding { token: i64::from(n) },
            _ => Belief::Acquiring,
        }
    }

    fn mode(&self) -> Mode {
        Mode::Take
    }

    fn owned_node(&self) -> Option<&str> {
        None
    }

    /// A queue's own property, liveness and what must be reached; not a lock's exclusion,
    /// fencing or orphans (items and records are nobody's nodes).
    fn applies(&self, property: Property) -> bool {
        matches!(property, Property::TakenOnce | Property::EventualAcquire | Property::Reached(_))
    }

    /// Its state holds items' numbers and its records' names carry them as text: the checker
    /// keeps its states as they are rather than renumber them.
    fn renumbered_by_replay(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::{Listing, Recipe, SessionId, Stat};

    const CTX: Ctx = Ctx { client: 1, session: SessionId(2) };

    fn reply(q: &mut WorkQueue, request: Request, result: ZkResult) -> Vec<Request> {
        let mut out = Vec::new();
        q.handle(&CTX, Input::Reply { request, result }, &mut out);
        out
    }

    fn listed(take: Take) -> (WorkQueue, Vec<Request>) {
        let mut q = WorkQueue::new("queue", "/lock", take);
        let mut out = Vec::new();
        q.handle(&CTX, Input::Acquire, &mut out);
        let created = Ok(Response::Created { path: "/lock/item-0000000001".into(), stat: Stat::default() });
        let list = reply(&mut q, out[0].clone(), created);
        let names = vec!["item-0000000001".to_string(), "item-0000000000".to_string()];
        let take = reply(
            &mut q,
            list[0].clone(),
            Ok(Response::Children { children: Listing::new(names), stat: Stat::default() }),
        );
        (q, take)
    }

    #[test]
    fn a_consumer_takes_the_lowest_item_with_its_record_in_one_multi() {
        let (q, take) = listed(Take::Recorded);
        let expected = Request::Multi {
            ops: vec![
                Op::Delete { path: "/lock/item-0000000000".into(), version: -1 },
                Op::Create { path: "/lock/taken-0000000000".into(), data: "c1".into(), mode: CreateMode::Persistent },
            ],
        };
        assert_eq!(take, vec![expected]);
        assert_eq!(q.belief(), Belief::Acquiring);
    }

    #[test]
    fn a_lost_take_is_read_back_from_its_record() {
        let (mut q, take) = listed(Take::Recorded);
        let read = reply(&mut q, take[0].clone(), Err(ZkError::ConnectionLoss));
        assert_eq!(read, vec![Request::get_data("/lock/taken-0000000000", false)]);
        let mine = Ok(Response::Data { data: "c1".into(), stat: Stat::default() });
        reply(&mut q, read[0].clone(), mine);
        assert_eq!(q.belief(), Belief::Holding { token: 0 }, "its own name: it took item 0");
    }

    #[test]
    fn the_optimistic_consumer_takes_a_lost_delete_for_its_own() {
        let (mut q, take) = listed(Take::Optimistic);
        assert_eq!(take, vec![Request::delete("/lock/item-0000000000")]);
        assert!(reply(&mut q, take[0].clone(), Err(ZkError::ConnectionLoss)).is_empty());
        assert_eq!(q.belief(), Belief::Holding { token: 0 });
    }
}
