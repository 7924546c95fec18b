//! Fuzz target `frame`: one request frame (length prefix stripped) through
//! group-server's whole frame path, as `group_server::fuzzing::FrameTarget` runs it.

#![no_main]

use std::sync::LazyLock;

use group_server::fuzzing::FrameTarget;
use libfuzzer_sys::fuzz_target;

// One node for the whole run: opening a coordinator per input would spend the run
// starting threads.
static TARGET: LazyLock<FrameTarget> = LazyLock::new(FrameTarget::new);

fuzz_target!(|data: &[u8]| TARGET.handle(data));
