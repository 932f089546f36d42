//! Faults as real actions, each exact where the model places it (docs/real.md):
//! - **loss-before-apply**: the struck request is never sent; a ping bars the connection (its
//!   reply comes after every frame the server sent before it), then the connection drops.
//! - **loss-after-apply**: the struck request is sent and its reply read but not handed on: the
//!   connection drops right after it, the write applied.
//! - **disconnect**: a ping bars the connection, then it drops; the library reconnects to the
//!   same session after a back-off.
//! - **expire**: as disconnect, and the library stays away; a second connection holds the
//!   session open until, once the recipe has heard it is disconnected and the plan's moment
//!   comes, the driver closes it from there: the server's closeSession, exactly the
//!   transaction an expiry is (never the server's own timer).
//! - **crash**: the process is gone (no close); its session is closed the same way later.
//! - **give-up**: the application stops waiting (`Input::Abandon`).
//! - **pause**: the driver takes none of the client's steps and sends nothing for it until it
//!   resumes; a pause longer than the session's expiry is also a partition, closed as `expire`.
//!
//! - **lagging-read**, **lagging-session**: the session moves to the follower held one write
//!   behind (`session_moves`, `lagging`).
//!
//! The container reaper and an operator's delete are not driven yet (`unsupported`).
//! The lost requests strike in `library` (`Driver::send`), where requests go out.

use super::client::CutKind;
use super::connection::{Arrival, Connection, Frame};
use super::driver::{Driver, Event};
use super::fault_ledger::{Phase, Strike};
use super::jute;
use super::shadow::{Landing, Place, ShadowStep};
use std::sync::mpsc::Receiver;
use std::time::Duration;
use zklab_model::world::{Link, Sending};
use zklab_model::{Belief, ClientFault, ClientId, Fault, FaultKind, Input, Recipe, Step};
use zklab_sim::{between, draw_pause};

/// The faults the driver cannot make happen on these servers, and why: lagging reads need
/// the lagging follower of an ensemble started here (`lagging_follower`).
pub fn unsupported(kind: FaultKind, lagging_follower: bool) -> Option<&'static str> {
    match kind {
        FaultKind::LaggingRead | FaultKind::LaggingSession if !lagging_follower => Some(
            "a lagging read needs a follower whose link to the leader this command holds: \
             an ensemble started here (--servers 3)",
        ),
        FaultKind::ReapParent => Some("the container reaper's moment cannot be chosen on a real server"),
        FaultKind::OperatorDelete => Some("an operator's delete is not driven on a real server yet"),
        _ => None,
    }
}

/// Closes a session on `conn`; the closeSession transaction's zxid.
pub(super) fn close(conn: &mut Connection, rx: &Receiver<Arrival>) -> Result<i64, String> {
    let xid = conn.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION)).map_err(|e| e.to_string())?;
    loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Arrival { frame: Frame::Reply { xid: got, zxid, .. }, .. }) if got == xid => return Ok(zxid),
            Ok(Arrival { frame: Frame::Closed, .. }) => return Err("the connection closed first".into()),
            Ok(_) => {}
            Err(_) => return Err("no reply to closeSession within 10 s".into()),
        }
    }
}

impl<R: Recipe> Driver<'_, R> {
    /// A fault that is not a lost request strikes client `i` now, if the model would let it.
    pub(super) fn fault(&mut self, kind: FaultKind, i: usize) {
        let now = self.now_us();
        let c = &self.clients[i];
        let phase = Phase::of_belief(c.recipe.belief(), c.rounds_left == 0);
        let fault = match kind.typed() {
            Fault::Request(fault) => {
                // It strikes the client's next request.
                let mut armed = Strike::at(kind, i, now, phase);
                armed.moment = format!("armed {}", armed.moment);
                self.strikes.push(armed);
                self.clients[i].armed = Some(fault);
                return;
            }
            Fault::Client(fault) => fault,
            // Refused before the run (see `unsupported`).
            Fault::Server(_) => return,
        };
        if c.crashed || c.cut.is_some() {
            let why = if c.crashed { "its client had crashed" } else { "its client's connection was being cut" };
            self.strikes.push(Strike::missed(kind, i, why));
            return;
        }
        let enabled = match fault {
            ClientFault::Disconnect => c.link == Link::Up && c.conn.is_some(),
            // As the model: only a live session can be expired.
            ClientFault::Expire => c.link != Link::Partitioned && !c.closed,
            ClientFault::Crash => true,
            ClientFault::Pause => !c.paused,
            ClientFault::GiveUp => c.recipe.belief() == Belief::Acquiring && c.recipe.can_abandon(),
        };
        if !enabled {
            self.strikes.push(Strike::missed(kind, i, "not possible at that moment (as in the model)"));
            return;
        }
        self.metrics.faults += 1;
        self.strikes.push(Strike::at(kind, i, now, phase));
        if fault == ClientFault::GiveUp {
            return self.take(i, Sending::GiveUp, Input::Abandon);
        }
        if fault == ClientFault::Pause {
            return self.pause(i);
        }
        let c = &self.clients[i];
        let number = self.shadow.push(i, ShadowStep::new(now, Step::Fault(fault, i as ClientId), c.recipe.belief()));
        let connected = c.link == Link::Up && c.conn.is_some();
        match (fault, connected) {
            (ClientFault::Disconnect, _) => self.begin_cut(i, CutKind::Drop, Some(number), Vec::new()),
            (ClientFault::Expire, true) => self.begin_cut(i, CutKind::Partition, Some(number), Vec::new()),
            (ClientFault::Expire, false) => {
                self.clients[i].link = Link::Partitioned;
                self.hold_session(i);
            }
            (ClientFault::Crash, true) => self.begin_cut(i, CutKind::Crash, Some(number), Vec::new()),
            (ClientFault::Crash, false) => {
                self.hold_session(i);
                let c = &mut self.clients[i];
                c.crashed = true;
                c.in_flight.clear();
                c.outbound.clear();
                c.inbound.clear();
                c.watches.clear();
            }
            (ClientFault::GiveUp | ClientFault::Pause, _) => unreachable!("taken above"),
        }
        if matches!(fault, ClientFault::Expire | ClientFault::Crash) && !self.clients[i].closed {
            // When the server would expire it, as the simulator draws it; then exactly.
            let (lo, hi) = self.timing.expiry_window();
            let at = now + between(&mut self.fault_streams[kind.index()], lo, hi);
            self.push(at, Event::CloseSession(i as ClientId));
        }
    }

    /// Client `i`'s process pauses: the driver takes none of its steps and sends nothing for it
    /// (its library's pings included) until it resumes. A pause the plan draws longer than the
    /// session's earliest expiry is also, to the server, a partition: the connection drops
    /// behind a barrier and the session is closed exactly at the drawn moment, as `expire`.
    fn pause(&mut self, i: usize) {
        let now = self.now_us();
        // The process's last act: the server heard from it just now, so a pause shorter than the
        // session timeout never lets the server expire the session on its own.
        self.ping(i);
        let c = &mut self.clients[i];
        self.shadow.push(i, ShadowStep::new(now, Step::Fault(ClientFault::Pause, i as ClientId), c.recipe.belief()));
        c.paused = true;
        if self.target.script.is_some() {
            // Steered: the trace says when it resumes and whether it expires.
            return;
        }
        let (length, expiry) = draw_pause(&self.timing, &mut self.fault_streams[FaultKind::Pause.index()]);
        self.push(now + length, Event::Resume(i as ClientId));
        let c = &self.clients[i];
        let Some(expiry) = expiry.filter(|_| c.link != Link::Partitioned && !c.closed) else { return };
        let c = &self.clients[i];
        let number = self
            .shadow
            .push(i, ShadowStep::new(now, Step::Fault(ClientFault::Expire, i as ClientId), c.recipe.belief()));
        match c.link == Link::Up && c.conn.is_some() {
            true => self.begin_cut(i, CutKind::Partition, Some(number), Vec::new()),
            false => {
                self.clients[i].link = Link::Partitioned;
                self.hold_session(i);
            }
        }
        self.push(now + expiry, Event::CloseSession(i as ClientId));
    }

    /// Client `i`'s process runs again, acting on what it believed; what arrived meanwhile is
    /// handed to it now.
    pub(super) fn resume(&mut self, i: usize) {
        let now = self.now_us();
        let c = &mut self.clients[i];
        if !c.paused || c.crashed {
            return;
        }
        c.paused = false;
        self.shadow.push(i, ShadowStep::new(now, Step::Resume(i as ClientId), c.recipe.belief()));
        self.deliver(i);
    }

    /// The server expires client `i`'s session: the driver opens it from a second connection
    /// and closes it (the closeSession transaction an expiry is), once the model would.
    pub(super) fn close_session(&mut self, i: usize) {
        let c = &self.clients[i];
        if c.closed {
            // The session is gone already: there is nothing to expire.
            return;
        }
        let partitioned = c.link == Link::Partitioned && (c.noticed_disconnect || c.paused);
        if !(c.crashed || partitioned) {
            if c.link == Link::Partitioned && !c.crashed {
                // The recipe has not heard of the outage yet; the tracker looks again.
                self.push(self.now_us() + self.timing.tick, Event::CloseSession(i as ClientId));
            }
            return;
        }
        if c.keeper.is_none() && c.crashed {
            // Closed already: a second expiry of a crashed client's session is none.
            return;
        }
        let closed = match self.clients[i].keeper.take() {
            Some((conn, _)) if conn.timeout_ms == 0 => Err("the server had expired the session on its own".to_string()),
            Some((mut conn, rx)) => close(&mut conn, &rx),
            None => Err("no connection held the session open".to_string()),
        };
        let zxid = match closed {
            Ok(zxid) => zxid,
            Err(why) => {
                return self.shadow_diverges(i, Step::Expire(i as ClientId), format!("closing the session: {why}"))
            }
        };
        self.seen_zxid = self.seen_zxid.max(zxid);
        let now = self.now_us();
        self.wire.push(
            now,
            i,
            "connection",
            format!("closeSession from a second connection: the expiry, zxid {zxid:#x}"),
        );
        let c = &mut self.clients[i];
        let mut entry = ShadowStep::new(now, Step::Expire(i as ClientId), c.recipe.belief());
        entry.barrier = Some(Landing::At(Place::write(zxid)));
        self.shadow.push(i, entry);
        c.closed = true;
        if !c.crashed {
            c.link = Link::Down;
            if !c.reconnecting {
                c.reconnecting = true;
                let back = between(&mut self.streams.network, self.config.link(i).max_us, self.timing.ping_interval());
                self.push(now + back.min(200_000), Event::Reconnect(i as ClientId));
            }
        }
    }
}
