//! A [`Normalizer`] still being compiled: [`Normalizer::compile_in_background`] builds the
//! default rules on another thread while the caller reads its inputs (their regexes take
//! about a quarter of a whole-process diff of two 1 MB bodies), and
//! [`PendingNormalizer::get`] waits for it.

use super::Normalizer;

/// A normalizer that is ready, or being compiled on another thread.
#[derive(Debug)]
pub struct PendingNormalizer(State);

#[derive(Debug)]
enum State {
    Ready(Normalizer),
    Compiling(std::thread::JoinHandle<Normalizer>),
}

impl Normalizer {
    /// The default rules ([`Normalizer::defaults`]), compiled on a thread of their own
    /// (`agentwire-rules`); where no thread can be started, compiled now.
    pub fn compile_in_background() -> PendingNormalizer {
        match std::thread::Builder::new()
            .name("agentwire-rules".into())
            .spawn(Normalizer::defaults)
        {
            Ok(h) => PendingNormalizer(State::Compiling(h)),
            Err(_) => PendingNormalizer::ready(Normalizer::defaults()),
        }
    }
}

impl PendingNormalizer {
    /// A normalizer built already (a rules file, or no rules), in the same shape.
    pub fn ready(n: Normalizer) -> PendingNormalizer {
        PendingNormalizer(State::Ready(n))
    }

    /// The normalizer, waiting for the compiling thread if need be (a panic there goes
    /// on in the caller).
    pub fn get(self) -> Normalizer {
        match self.0 {
            State::Ready(n) => n,
            State::Compiling(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_background_normalizer_is_the_default_one() {
        let n = Normalizer::compile_in_background().get();
        assert_eq!(n.names(), Normalizer::defaults().names());
        let none = PendingNormalizer::ready(Normalizer::none()).get();
        assert!(none.names().is_empty());
    }
}
