//! The shared server's tree, made clean for each script. Every top-level node but /zookeeper
//! goes, and the script then runs chrooted under a freshly created [`ROOT`]: sequence counters
//! live in the parent's cversion and only reset with a new parent, and the server's own root
//! can never be new (nor hide its /zookeeper child), so a recording's "/" is this node.

use zookeeper_client::{Acls, Client, CreateMode, Error};

/// The node every script runs under.
pub(super) const ROOT: &str = "/zklab";

/// The server's own subtree, never touched.
fn reserved(path: &str) -> bool {
    path == "/" || path == "/zookeeper" || path.starts_with("/zookeeper/")
}

/// Deletes every top-level node except /zookeeper (with its subtree), then creates [`ROOT`].
pub(super) async fn prepare(client: &Client) -> Result<(), String> {
    let top = client.list_children("/").await.map_err(|e| format!("listing /: {e}"))?;
    for child in top {
        delete_tree(client, &format!("/{child}")).await?;
    }
    client
        .create(ROOT, b"", &CreateMode::Persistent.with_acls(Acls::anyone_all()))
        .await
        .map_err(|e| format!("creating {ROOT}: {e}"))?;
    Ok(())
}

/// Deletes `top` and everything under it, deepest first; refuses the server's own subtree.
async fn delete_tree(client: &Client, top: &str) -> Result<(), String> {
    if reserved(top) {
        return Ok(());
    }
    let mut nodes = vec![top.to_string()];
    let mut next = 0;
    while next < nodes.len() {
        let parent = nodes[next].clone();
        next += 1;
        match client.list_children(&parent).await {
            Ok(children) => nodes.extend(children.into_iter().map(|c| format!("{parent}/{c}"))),
            Err(Error::NoNode) => {}
            Err(e) => return Err(format!("listing {parent}: {e}")),
        }
    }
    for node in nodes.iter().rev().filter(|n| !reserved(n)) {
        match client.delete(node, None).await {
            Ok(()) | Err(Error::NoNode) => {}
            Err(e) => return Err(format!("deleting {node}: {e}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::reserved;

    #[test]
    fn the_servers_own_nodes_are_reserved() {
        assert!(reserved("/zookeeper"));
        assert!(reserved("/zookeeper/quota"));
        assert!(reserved("/"));
        assert!(!reserved("/zookeeperish"));
        assert!(!reserved("/lock"));
    }
}
