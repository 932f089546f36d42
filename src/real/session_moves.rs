//! Lagging reads as real actions: a session moves to the lagging follower for the read a
//! `lagging-read` strikes (and straight back), or for every read from a `lagging-session`
//! strike until its follower catches up (`Step::CatchUp`) or its connection drops.
//!
//! The follower is held one write behind the leader for the whole run (`lagging`), and no
//! client lives on it: a session is moved there only for its lagging reads. A move is what a
//! client library does when it changes servers, done between two frames so the recipe never
//! sees it: a ping bars the old connection (every frame the server sent before has arrived),
//! the session reconnects to the other server with its last zxid, and SetWatches re-arms every
//! watch the library holds (a watch whose node changed meanwhile fires there, as the model
//! fires a lagging read's watch once its follower applies what it missed). The model has no
//! servers, so a move is no step of its own; the step it serves is placed, in the leader's
//! order, after the newest write (what the model's lagging read sees is the state just before
//! it).
//!
//! A real server refuses a session that has seen a newer zxid than it has applied, and the
//! model's lagging view is never older than what the session has seen: so a lagging fault
//! strikes only a session that has not seen the write the follower is held behind (a new
//! handle, after an expiry, has seen nothing), on both sides.

use super::client::CutKind;
use super::driver::{Driver, Event};
use super::jute;
use super::shadow::{Landing, Place, ShadowStep};
use std::time::Instant;
use zklab_model::{ClientId, Recipe, Request, RequestFault, Step};
use zklab_sim::draw_catch_up;

/// How many times a move is tried again before the run is called diverged.
const MOVE_TRIES: u32 = 40;

impl<R: Recipe> Driver<'_, R> {
    /// Whether client `i`'s next read can be answered by the lagging follower: it is held
    /// behind a write this session (or, `new_handle`, the one it is about to open) has not seen.
    pub(super) fn can_lag(&self, i: usize, new_handle: bool) -> bool {
        let c = &self.clients[i];
        let seen = if new_handle { 0 } else { c.last_zxid };
        c.lag.is_none() && self.lagging.and_then(|l| l.behind()).is_some_and(|write| seen < write)
    }

    /// A lagging fault strikes client `i`'s step `entry`: its session moves to the follower,
    /// and the step's requests go out there (a `lagging-read`'s first only).
    pub(super) fn move_to_follower(&mut self, i: usize, kind: RequestFault, entry: u64, mut out: Vec<Request>) {
        let Some(lagging) = self.lagging else { return };
        let rest = match kind {
            RequestFault::LaggingRead => out.split_off(1),
            _ => Vec::new(),
        };
        let c = &mut self.clients[i];
        c.lag = Some(kind);
        c.lag_rest = (!rest.is_empty()).then_some((entry, rest));
        if kind == RequestFault::LaggingSession && self.target.script.is_none() {
            // When the follower catches up, as the simulator draws it.
            let at = self.now_us() + draw_catch_up(&mut self.fault_streams[kind.kind().index()]);
            self.push(at, Event::CatchUp(i as ClientId));
        }
        self.begin_cut(i, CutKind::Move { to: lagging.server }, Some(entry), out);
    }

    /// The session of client `i` arrives at server `to`: SetWatches, then `requests` as step
    /// `entry`'s.
    pub(super) fn finish_move(&mut self, i: usize, to: usize, entry: Option<u64>, requests: Vec<Request>) {
        let follower = self.lagging.is_some_and(|l| l.server == to);
        self.left_follower(i, false);
        let c = &mut self.clients[i];
        if let Some(conn) = c.conn.take() {
            conn.drop_link();
        }
        c.generation += 1;
        let (session, password, last, generation) = (c.real_session, c.password.clone(), c.last_zxid, c.generation);
        // A follower refuses a session that has seen more than it has applied: a write just
        // released to it takes a few milliseconds to apply, so the move tries again a while.
        let mut tries = 0;
        let conn = loop {
            match self.connect(i, to, (session, &password), last, generation) {
                Ok(conn) if conn.timeout_ms > 0 => break conn,
                Ok(_) => return self.cannot_move(i, to, "the server says the session has expired".into()),
                Err(_) if tries < MOVE_TRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(why) => return self.cannot_move(i, to, format!("{why} ({MOVE_TRIES} tries, 5 ms apart)")),
            }
        };
        let c = &mut self.clients[i];
        c.conn = Some(conn);
        c.last_sent = Instant::now();
        if follower {
            c.on_follower = true;
            if let Some(lagging) = self.lagging {
                lagging.connected(session, true);
            }
        }
        let c = &mut self.clients[i];
        let (data, exist, child) = c.watched();
        if !(data.is_empty() && exist.is_empty() && child.is_empty()) {
            let payload = jute::set_watches(last, &data, &exist, &child, &self.target.chroot);
            if c.conn.as_mut().expect("just connected").send_bare(payload).is_ok() {
                c.catching_up = true;
            }
        }
        if let Some(entry) = entry {
            self.send(i, requests, entry, None);
            if let Some((rest_of, _)) = self.clients[i].lag_rest.as_ref().filter(|_| follower) {
                // The step is not whole until the rest of its requests are sent, back home.
                let floor = Place::read(self.clients[i].last_zxid);
                if let Some(e) = self.shadow.entry_mut(i, *rest_of) {
                    e.barrier = Some(Landing::InFlight { floor });
                }
            }
        }
        self.deliver(i);
    }

    fn cannot_move(&mut self, i: usize, to: usize, why: String) {
        let step = Step::Receive(i as ClientId);
        self.shadow_diverges(i, step, format!("the session could not move to server {}: {why}", to + 1));
    }

    /// A `lagging-read` has been answered: the session goes back to its own server, and the
    /// step's other requests go out there.
    pub(super) fn back_from_follower(&mut self, i: usize) {
        self.home_in_step(i);
        let c = &mut self.clients[i];
        c.lag = None;
        let home = c.server;
        let (entry, rest) = c.lag_rest.take().map_or((None, Vec::new()), |(e, rest)| (Some(e), rest));
        self.begin_cut(i, CutKind::Move { to: home }, entry, rest);
    }

    /// The follower of client `i`'s lagging session catches up (`Step::CatchUp`): the session
    /// goes back to its own server, where every read sees the newest state.
    pub(super) fn catch_up(&mut self, i: usize) -> bool {
        let c = &self.clients[i];
        if c.lag != Some(RequestFault::LaggingSession) || c.crashed {
            return false;
        }
        if !c.on_follower || c.cut.is_some() {
            // Still on its way there, or its connection is dropping (which ends the lag).
            if self.target.script.is_none() {
                self.push(self.now_us() + 1_000, Event::CatchUp(i as ClientId));
            }
            return false;
        }
        self.home_in_step(i);
        let c = &self.clients[i];
        let now = self.now_us();
        let number = self.shadow.push(i, ShadowStep::new(now, Step::CatchUp(i as ClientId), c.recipe.belief()));
        let c = &mut self.clients[i];
        c.lag = None;
        let home = c.server;
        self.begin_cut(i, CutKind::Move { to: home }, Some(number), Vec::new());
        true
    }

    /// Before a session goes back home: its server has applied the newest write (a follower
    /// applies a committed write a little after the leader; the read the session had on the
    /// lagging follower is placed after that write, and nothing it does at home may be placed
    /// before it).
    fn home_in_step(&mut self, i: usize) {
        let Some(lagging) = self.lagging else { return };
        let home = &self.target.servers[self.clients[i].server];
        if let Err(why) = super::ensemble::wait_applied(home, lagging.newest_write()) {
            self.shadow_diverges(i, Step::Receive(i as ClientId), why);
        }
    }

    /// Client `i`'s connection is no longer on the lagging follower (it moved, or, `ends`, it
    /// dropped or its handle was replaced: then its lag ends, as the model's ends with the
    /// connection).
    pub(super) fn left_follower(&mut self, i: usize, ends: bool) {
        let c = &mut self.clients[i];
        if c.on_follower {
            c.on_follower = false;
            if let Some(lagging) = self.lagging {
                lagging.connected(c.real_session, false);
            }
        }
        if ends {
            c.lag = None;
            c.lag_rest = None;
        }
    }
}
