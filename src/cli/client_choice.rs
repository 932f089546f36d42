//! `--client java|kazoo`: the client library a command asks for, and its jute.maxbuffer.

use crate::scenario::BadInput;

/// The client library a command line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientChoice {
    Java,
    Kazoo,
}

impl ClientChoice {
    pub fn behaviour(self) -> zklab_model::ClientBehaviour {
        match self {
            ClientChoice::Java => zklab_model::ClientBehaviour::Java,
            ClientChoice::Kazoo => zklab_model::ClientBehaviour::Kazoo,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ClientChoice::Java => "java",
            ClientChoice::Kazoo => "kazoo",
        }
    }

    /// `--jute-maxbuffer`, checked: the Java client's setting, a positive int.
    pub fn jute_maxbuffer(self, bytes: Option<u64>) -> Result<Option<u32>, BadInput> {
        let Some(bytes) = bytes else { return Ok(None) };
        if self == ClientChoice::Kazoo {
            return Err(BadInput(
                "--jute-maxbuffer is the Java client's setting: kazoo reads replies of any length".into(),
            ));
        }
        match u32::try_from(bytes) {
            Ok(b) if (1..=i32::MAX as u32).contains(&b) => Ok(Some(b)),
            _ => Err(BadInput(format!("--jute-maxbuffer must be between 1 and {} bytes, got {bytes}", i32::MAX))),
        }
    }
}
