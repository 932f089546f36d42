//! ZooKeeper's session timing. The server clamps the requested session timeout T to
//! [2, 20] ticks (unless configured otherwise); the client pings after T/3 of quiet and declares
//! the connection lost after 2T/3 without hearing from the server; the server's session tracker
//! runs once per tick, so a silent session expires between T and T plus one tick after its last
//! packet.

use crate::queue::Micros;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionTiming {
    /// The negotiated session timeout T.
    pub timeout: Micros,
    pub tick: Micros,
}

impl SessionTiming {
    pub fn new(negotiated_timeout_ms: u32, tick_ms: u32) -> Self {
        SessionTiming { timeout: u64::from(negotiated_timeout_ms) * 1000, tick: u64::from(tick_ms) * 1000 }
    }

    /// How long a client waits without a packet before it pings.
    pub fn ping_interval(&self) -> Micros {
        self.timeout / 3
    }

    /// How long a client hears nothing before it declares the connection lost.
    pub fn read_timeout(&self) -> Micros {
        self.timeout * 2 / 3
    }

    /// The earliest and latest expiry after the last packet the server heard.
    pub fn expiry_window(&self) -> (Micros, Micros) {
        (self.timeout, self.timeout + self.tick)
    }
}
