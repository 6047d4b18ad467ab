//! Sources of exchanges: the fake API server, the recorder that runs CLIs under it.
