//! A TCP proxy in front of the server for one session, so a script can cut the session's
//! connection (`disconnect`) while the server keeps the session, and let the client back in
//! (`reconnect`). While cut it accepts connection attempts and closes them at once, as a host
//! whose server process is gone would refuse them.

use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

#[derive(Default)]
struct Gate {
    cut: bool,
    /// The tasks copying the open connections' bytes; aborting one closes both its sockets.
    pipes: Vec<AbortHandle>,
}

pub(super) struct Proxy {
    address: String,
    gate: Arc<Mutex<Gate>>,
    listener: AbortHandle,
}

impl Proxy {
    /// Listens on a free loopback port and forwards every connection to `server`.
    pub(super) async fn start(server: &str) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?.to_string();
        let gate = Arc::new(Mutex::new(Gate::default()));
        let server = server.to_string();
        let shared = Arc::clone(&gate);
        let listener = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if shared.lock().expect("the gate is never poisoned").cut {
                    continue;
                }
                let Ok(mut upstream) = TcpStream::connect(&server).await else { continue };
                let pipe = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                });
                let mut gate = shared.lock().expect("the gate is never poisoned");
                gate.pipes.retain(|p| !p.is_finished());
                match gate.cut {
                    true => pipe.abort(),
                    false => gate.pipes.push(pipe.abort_handle()),
                }
            }
        })
        .abort_handle();
        Ok(Proxy { address, gate, listener })
    }

    /// HOST:PORT for the client to connect to.
    pub(super) fn address(&self) -> &str {
        &self.address
    }

    /// Closes every connection through the proxy and refuses new ones.
    pub(super) fn cut(&self) {
        let mut gate = self.gate.lock().expect("the gate is never poisoned");
        gate.cut = true;
        gate.pipes.drain(..).for_each(|pipe| pipe.abort());
    }

    /// Lets connections through again.
    pub(super) fn restore(&self) {
        self.gate.lock().expect("the gate is never poisoned").cut = false;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.listener.abort();
        self.cut();
    }
}

#[cfg(test)]
mod tests {
    use super::Proxy;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// An echo server behind a proxy: bytes pass, a cut closes the connection and refuses the
    /// next one, a restore lets a new one through.
    #[test]
    fn a_cut_closes_and_refuses_until_restored() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let server = echo.local_addr().unwrap().to_string();
            tokio::spawn(async move {
                while let Ok((mut conn, _)) = echo.accept().await {
                    tokio::spawn(async move {
                        let (mut r, mut w) = conn.split();
                        let _ = tokio::io::copy(&mut r, &mut w).await;
                    });
                }
            });
            let proxy = Proxy::start(&server).await.unwrap();
            let round_trip = |mut conn: TcpStream| async move {
                conn.write_all(b"ping").await.ok()?;
                let mut buf = [0u8; 4];
                tokio::time::timeout(Duration::from_secs(2), conn.read_exact(&mut buf)).await.ok()?.ok()?;
                Some((buf, conn))
            };
            let conn = TcpStream::connect(proxy.address()).await.unwrap();
            let (buf, mut conn) = round_trip(conn).await.expect("bytes pass through");
            assert_eq!(&buf, b"ping");
            proxy.cut();
            let mut rest = Vec::new();
            let closed = tokio::time::timeout(Duration::from_secs(2), conn.read_to_end(&mut rest)).await;
            assert!(matches!(closed, Ok(Ok(0)) | Ok(Err(_))), "the cut closes the connection");
            let refused = TcpStream::connect(proxy.address()).await.unwrap();
            assert!(round_trip(refused).await.is_none(), "a new connection is refused while cut");
            proxy.restore();
            let conn = TcpStream::connect(proxy.address()).await.unwrap();
            assert!(round_trip(conn).await.is_some(), "restored");
        });
    }
}
