//! Keeps the core's warnings of the current probe, so a failed open can be reported with the
//! one line the core logged about it.
//!
//! datinfo installs [`Capture`] as the process-wide `tracing` subscriber before touching the
//! core. Warnings and errors are stored (and [`take`]n by the prober around each open); with
//! `DAT_LOG` (or `DAT_DBG_TYPE` / `DAPL_DBG_TYPE`) set, every event up to that level is also
//! printed on stderr, as libdat would.

use std::fmt::Write as _;
use std::sync::Mutex;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The subscriber: records warnings, echoes up to `echo` on stderr.
pub struct Capture {
    echo: Option<Level>,
}

/// Installs [`Capture`] as the global subscriber (once, at start-up).
pub fn install() {
    let echo = datcore::log::level_from_env();
    let _ = tracing::subscriber::set_global_default(Capture { echo });
}

/// The warnings logged since the last call, oldest first.
pub fn take() -> Vec<String> {
    std::mem::take(&mut *WARNINGS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The message of an event, then its other fields as `name=value`.
#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        *meta.level() <= Level::WARN || self.echo.is_some_and(|l| *meta.level() <= l)
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut text = Text::default();
        event.record(&mut text);
        let level = *event.metadata().level();
        if self.echo.is_some_and(|l| level <= l) {
            eprintln!("{level} {}{}", text.message, text.fields);
        }
        if level <= Level::WARN {
            WARNINGS.lock().unwrap_or_else(|e| e.into_inner()).push(text.message);
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}
