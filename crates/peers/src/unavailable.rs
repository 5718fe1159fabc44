//! Tools of the seed articles that cannot be run here: their rows say why, as the C# servers' do.

use crate::claims::Claims;
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output};
use crate::tool::Tool;

pub struct K6;
pub struct Ali;

const K6_WHY: &str =
    "k6 is not installed here: the Go registry this machine installs from marks go.k6.io/k6 not to be used";
const ALI_WHY: &str = "ali cannot be installed here: the Go module proxy refuses github.com/nakabonne/ali";

/// Why the tool named `name` cannot run here, if it cannot.
pub fn why(name: &str) -> Option<&'static str> {
    match name {
        "k6" => Some(K6_WHY),
        "ali" => Some(ALI_WHY),
        _ => None,
    }
}

macro_rules! unavailable {
    ($tool:ident, $name:literal, $why:ident) => {
        impl Tool for $tool {
            fn name(&self) -> &'static str {
                $name
            }
            fn program(&self) -> &'static str {
                $name
            }
            fn install(&self) -> &'static str {
                $why
            }
            fn invocation(&self, _: &Load) -> Result<Invocation, PeerError> {
                Err(PeerError::Missing($why.into()))
            }
            fn parse(&self, _: &Output) -> Result<Claims, PeerError> {
                Err(PeerError::Missing($why.into()))
            }
        }
    };
}

unavailable!(K6, "k6", K6_WHY);
unavailable!(Ali, "ali", ALI_WHY);
