//! The [`Extractor`]: packets in, [`Exchange`]s out. Ties link layer, IP, TCP
//! reassembly and HTTP together over any packet source (a file, a live interface, or an
//! in-memory iterator in tests), keeps the connection table bounded, numbers exchanges
//! in order of request arrival, and counts everything it skipped in a [`ExtractionSummary`].
//!
//! Memory is bounded independently of the capture's length: per connection by the
//! reassembly buffer ([`super::tcp::MAX_BUFFERED`]) and held segments (`MAX_HELD`), the
//! connection table by an idle timeout and a cap ([`Config`]), and finished exchanges
//! waiting behind an unfinished earlier request by `MAX_READY` (beyond it they are
//! released and the late one is numbered when it finishes). The bodies of exchanges in
//! progress are the remaining cost.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};

use super::conn::{Conn, Held, Kind, MAX_HELD};
use super::http::{ConnInfo, HttpConn};
use super::ip::{self, IpSkip, Segment};
use super::link::{self, LinkSkip};
use super::summary::{ExtractionSummary, TlsConnection};
use super::tcp::{Meta, Stream};
use super::tls::{self, Hello};
use super::{Packet, NO_TIME};
use crate::trace::{Exchange, SourceKind};

/// What to extract.
#[derive(Clone, Debug)]
pub struct Config {
    /// Keep only TCP segments with one of these ports (either side); empty: all.
    pub ports: Vec<u16>,
    /// Keep only segments to or from one of these addresses; empty: all.
    pub hosts: Vec<IpAddr>,
    /// `Pcap` for files, `Live` for interfaces.
    pub kind: SourceKind,
    /// A connection with no packet for this long (capture time, seconds) is closed.
    pub idle_timeout_s: u64,
    /// Most connections tracked at once; beyond it the longest idle are closed.
    pub max_connections: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ports: Vec::new(),
            hosts: Vec::new(),
            kind: SourceKind::Pcap,
            idle_timeout_s: 900,
            max_connections: 65_536,
        }
    }
}

/// Most finished exchanges kept waiting for an earlier request to finish.
const MAX_READY: usize = 4096;

/// Extracts exchanges from packets. Feed packets with [`Extractor::packet`], collect
/// finished exchanges with [`Extractor::take`], and call [`Extractor::finish`] at the end.
pub struct Extractor {
    config: Config,
    file: Option<String>,
    /// Connections by (client, server); foldhash: several lookups per packet.
    conns: HashMap<(SocketAddr, SocketAddr), Conn, foldhash::fast::RandomState>,
    ids: u64,
    emitted: u64,
    scratch: Vec<Exchange>,
    ready: BTreeMap<u64, Exchange>,
    out: Vec<Exchange>,
    summary: ExtractionSummary,
    since_sweep: u32,
    /// Time of the last packet that had one (this source).
    clock: Option<i64>,
    /// Packets without a time seen before any packet with one: they take the next time.
    untimed: Vec<Untimed>,
    /// WebSocket upgrades released: their id while extracting → their id in the trace
    /// (a message's `websocket.upgrade` names the latter).
    upgrades: HashMap<u64, u64, foldhash::fast::RandomState>,
}

/// A packet without a timestamp, kept until a neighbour gives it one.
struct Untimed {
    frame: u64,
    link_type: u32,
    data: Vec<u8>,
    orig_len: u32,
}

/// Most packets without a time kept waiting for the next packet with one.
const MAX_UNTIMED: usize = 1024;

impl Extractor {
    /// An extractor with no packet seen.
    pub fn new(config: Config) -> Self {
        Extractor {
            config,
            file: None,
            conns: HashMap::default(),
            ids: 0,
            emitted: 0,
            scratch: Vec::new(),
            ready: BTreeMap::new(),
            out: Vec::new(),
            summary: ExtractionSummary::default(),
            since_sweep: 0,
            clock: None,
            untimed: Vec::new(),
            upgrades: HashMap::default(),
        }
    }

    /// Name the source of the following packets (a file path, `iface:lo`). Connections
    /// of the previous source are closed first.
    pub fn set_source(&mut self, name: Option<String>) {
        self.release_untimed(NO_TIME);
        self.clock = None;
        self.close_all("capture ended");
        self.file = name;
    }

    /// Counts so far.
    pub fn summary(&self) -> &ExtractionSummary {
        &self.summary
    }

    /// Exchanges finished so far, in order of request arrival, numbered from 0.
    pub fn take(&mut self) -> Vec<Exchange> {
        std::mem::take(&mut self.out)
    }

    /// Close every connection and return the remaining exchanges and the summary.
    pub fn finish(mut self) -> (Vec<Exchange>, ExtractionSummary) {
        self.release_untimed(NO_TIME);
        self.close_all("capture ended");
        self.release(u64::MAX);
        (self.out, self.summary)
    }

    /// Process one packet. A packet without a time takes the previous packet's, or, at
    /// the start of a source, the next one's (up to 1024 packets wait for it).
    pub fn packet(&mut self, p: &Packet<'_>) {
        if p.ts_ns.is_none() {
            self.summary.untimed_packets += 1;
        }
        match (p.ts_ns, self.clock) {
            (Some(t), _) => {
                self.clock = Some(t);
                self.release_untimed(t);
                self.timed(p, t);
            }
            (None, Some(t)) => self.timed(p, t),
            (None, None) if self.untimed.len() < MAX_UNTIMED => self.untimed.push(Untimed {
                frame: p.frame,
                link_type: p.link_type,
                data: p.data.to_vec(),
                orig_len: p.orig_len,
            }),
            (None, None) => {
                self.release_untimed(NO_TIME);
                self.timed(p, NO_TIME);
            }
        }
    }

    /// Process the packets waiting for a time with time `ts`.
    fn release_untimed(&mut self, ts: i64) {
        for u in std::mem::take(&mut self.untimed) {
            let p = Packet {
                frame: u.frame,
                ts_ns: None,
                link_type: u.link_type,
                data: &u.data,
                orig_len: u.orig_len,
            };
            self.timed(&p, ts);
        }
    }

    /// Process one packet captured at `ts` (ns, or [`NO_TIME`]).
    fn timed(&mut self, p: &Packet<'_>, ts: i64) {
        self.summary.packets += 1;
        self.summary.bytes += p.data.len() as u64;
        let sliced = match link::slice(p.link_type, p.data) {
            Ok(s) => s,
            Err(LinkSkip::UnknownLinkType) => {
                *self
                    .summary
                    .unknown_link_types
                    .entry(p.link_type)
                    .or_default() += 1;
                return;
            }
            Err(_) => {
                self.summary.not_ip += 1;
                return;
            }
        };
        let seg = match ip::segment(&sliced) {
            Ok(s) => s,
            Err(IpSkip::NotTcp) => {
                self.summary.not_tcp += 1;
                return;
            }
            Err(IpSkip::Fragment) => {
                self.summary.fragments += 1;
                return;
            }
            Err(IpSkip::BadTcpHeader) => {
                self.summary.bad_tcp_header += 1;
                return;
            }
        };
        if !self.wanted(&seg) {
            self.summary.filtered_out += 1;
            return;
        }
        self.summary.tcp_segments += 1;
        let at = Meta {
            ts,
            frame: p.frame,
            ack: seg.ack.then_some(seg.ack_no),
        };
        self.segment(&seg, at);
        self.since_sweep += 1;
        if self.since_sweep >= 4096 {
            self.since_sweep = 0;
            if ts != NO_TIME {
                self.sweep(ts);
            }
        }
        if !self.scratch.is_empty() {
            self.settle();
        }
    }

    fn wanted(&self, s: &Segment<'_>) -> bool {
        let c = &self.config;
        (c.ports.is_empty() || c.ports.contains(&s.src.port()) || c.ports.contains(&s.dst.port()))
            && (c.hosts.is_empty()
                || c.hosts.contains(&s.src.ip())
                || c.hosts.contains(&s.dst.ip()))
    }

    fn segment(&mut self, s: &Segment<'_>, at: Meta) {
        let (key, dir) = if self.conns.contains_key(&(s.src, s.dst)) {
            ((s.src, s.dst), 0)
        } else if self.conns.contains_key(&(s.dst, s.src)) {
            ((s.dst, s.src), 1)
        } else {
            if !s.syn && s.payload.is_empty() && s.missing == 0 {
                return; // a bare ACK/FIN/RST of a connection not (or no longer) tracked
            }
            let client_is_src = self.client_is_src(s);
            let key = if client_is_src {
                (s.src, s.dst)
            } else {
                (s.dst, s.src)
            };
            self.open(key);
            (key, usize::from(!client_is_src))
        };
        // Port reuse: a new SYN from the client with another ISN starts a new connection
        // (a SYN captured after its data, with the ISN the data follows, does not).
        if s.syn && !s.ack && dir == 0 {
            let client = &self.conns[&key].streams[0];
            let isn = client.isn();
            if isn.is_some_and(|i| i != s.seq) || (isn.is_none() && !client.syn_fits(s.seq)) {
                self.close(key, "port reused by a new connection", at);
                self.open(key);
            }
        }
        let conn = self
            .conns
            .get_mut(&key)
            .expect("connection was just looked up");
        // A direction seen without its SYN starts once the other side acknowledges all of
        // what is held of it.
        if s.ack && !s.rst {
            conn.with_stream(1 - dir, &mut self.ids, &mut self.scratch, |st, out| {
                st.start_if_acked(s.ack_no, out)
            });
        }
        // Capture-order anomaly: a segment that acknowledges bytes of the other direction
        // not seen yet waits for them, so a response is never parsed before its request.
        // (A direction whose start is not fixed yet holds its segments itself.)
        if s.ack
            && !s.rst
            && (!s.payload.is_empty() || s.fin)
            && (s.syn || conn.streams[dir].started())
            && conn.streams[1 - dir].acks_ahead(s.ack_no)
        {
            conn.held_bytes += s.payload.len();
            conn.held.push(Held::new(s, dir, at));
            self.summary.reordered_segments += 1;
            if conn.held_bytes > MAX_HELD {
                self.release_held(key, true);
            }
            return;
        }
        self.apply(key, dir, s, at);
        self.release_held(key, false);
    }

    /// Process held segments whose acknowledged bytes have arrived (`force`: all of them,
    /// declaring the bytes they acknowledge that never arrived a gap).
    fn release_held(&mut self, key: (SocketAddr, SocketAddr), force: bool) {
        loop {
            let Some(conn) = self.conns.get_mut(&key) else {
                return;
            };
            let pos = if force {
                (!conn.held.is_empty()).then_some(0)
            } else {
                conn.held
                    .iter()
                    .position(|h| !conn.streams[1 - h.dir].acks_ahead(h.ack_no))
            };
            let Some(i) = pos else { return };
            let h = conn.held.remove(i);
            conn.held_bytes -= h.payload.len();
            if force {
                conn.with_stream(1 - h.dir, &mut self.ids, &mut self.scratch, |st, out| {
                    st.advance_to_ack(h.ack_no, h.at, out)
                });
            }
            let seg = h.segment();
            self.apply(key, h.dir, &seg, h.at);
        }
    }

    /// Feed one segment of direction `dir` to its stream and the layers above.
    fn apply(&mut self, key: (SocketAddr, SocketAddr), dir: usize, s: &Segment<'_>, at: Meta) {
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        conn.last = at;
        conn.with_stream(dir, &mut self.ids, &mut self.scratch, |st, out| {
            st.segment(s.seq, s.syn, s.fin, s.payload, s.missing, at, out)
        });
        if s.rst {
            self.close(key, "connection reset", at);
            return;
        }
        if conn.streams[dir].finished() && !conn.ended[dir] {
            conn.ended[dir] = true;
            if conn.kind != Kind::Tls {
                conn.http.end(dir, &mut self.ids, &mut self.scratch);
            }
            if conn.ended == [true, true] && conn.held.is_empty() {
                self.close(key, "connection closed", at);
            }
        }
    }

    /// Which side is the client of a connection seen without its SYN (or from its SYN).
    fn client_is_src(&self, s: &Segment<'_>) -> bool {
        if s.syn {
            return !s.ack;
        }
        let ports = &self.config.ports;
        if ports.contains(&s.dst.port()) && !ports.contains(&s.src.port()) {
            return true;
        }
        if ports.contains(&s.src.port()) && !ports.contains(&s.dst.port()) {
            return false;
        }
        let p = s.payload;
        if p.starts_with(b"HTTP/1.") {
            return false;
        }
        if p.len() > 3 && p[..p.len().min(8)].contains(&b' ') && p[0].is_ascii_uppercase() {
            return true;
        }
        if tls::looks_like_tls(p) {
            return p.get(5) == Some(&1); // a ClientHello comes from the client
        }
        s.dst.port() <= s.src.port()
    }

    fn open(&mut self, key: (SocketAddr, SocketAddr)) {
        let info = ConnInfo {
            kind: self.config.kind,
            file: self.file.clone(),
            client: key.0,
            server: key.1,
            connection: self.summary.connections,
        };
        self.summary.connections += 1;
        self.conns.insert(
            key,
            Conn {
                streams: [Stream::new(), Stream::new()],
                http: HttpConn::new(info),
                kind: Kind::Unknown,
                hello: None,
                bytes: 0,
                ended: [false, false],
                last: Meta::default(),
                held: Vec::new(),
                held_bytes: 0,
            },
        );
    }

    fn close(&mut self, key: (SocketAddr, SocketAddr), why: &str, at: Meta) {
        if self.conns.get(&key).is_some_and(|c| !c.held.is_empty()) {
            self.release_held(key, true);
        }
        let Some(mut conn) = self.conns.remove(&key) else {
            return;
        };
        let (ids, out) = (&mut self.ids, &mut self.scratch);
        for dir in 0..2 {
            conn.with_stream(dir, ids, out, |st, out| st.flush(at, out));
        }
        if conn.kind != Kind::Tls {
            conn.http.close(why, ids, out);
        }
        let sum = &mut self.summary;
        for s in &conn.streams {
            sum.gap_bytes += s.stats.gap_bytes;
            sum.gaps += s.stats.gaps;
            sum.retransmitted_bytes += s.stats.retransmitted;
            sum.conflicting_bytes += s.stats.conflicts;
            sum.out_of_order_segments += s.stats.out_of_order;
        }
        let h = conn.http.stats();
        sum.orphan_responses += h.orphan_responses;
        sum.lost_responses += h.lost_responses;
        sum.skipped_http_bytes += h.requests.skipped + h.responses.skipped;
        sum.tunneled_bytes += h.requests.tunneled + h.responses.tunneled;
        match conn.kind {
            Kind::Tls => {
                let hello = conn.hello.unwrap_or_else(|| Hello {
                    version: "TLS".into(),
                    sni: None,
                });
                sum.tls.push(TlsConnection {
                    client: conn.http.info().client.to_string(),
                    server: conn.http.info().server.to_string(),
                    version: hello.version,
                    sni: hello.sni,
                    bytes: conn.bytes,
                });
            }
            Kind::Http if conn.http.saw_http() => sum.http_connections += 1,
            Kind::Http => {
                sum.non_http_connections += 1;
                sum.non_http_bytes += conn.bytes;
            }
            Kind::Unknown => {}
        }
        self.settle();
    }

    fn close_all(&mut self, why: &str) {
        let mut keys: Vec<_> = self
            .conns
            .iter()
            .map(|(k, c)| (c.http.info().connection, *k))
            .collect();
        keys.sort();
        for (_, k) in keys {
            let at = self.conns[&k].last;
            self.close(k, why, at);
        }
    }

    /// Close idle connections, and the longest idle ones beyond the cap.
    fn sweep(&mut self, now: i64) {
        let idle = self.config.idle_timeout_s as i64 * 1_000_000_000;
        let mut old: Vec<_> = self
            .conns
            .iter()
            .filter(|(_, c)| now - c.last.ts > idle)
            .map(|(k, c)| (c.last.ts, *k))
            .collect();
        if self.conns.len() - old.len() > self.config.max_connections {
            let mut all: Vec<_> = self.conns.iter().map(|(k, c)| (c.last.ts, *k)).collect();
            all.sort();
            let excess = self.conns.len() - self.config.max_connections;
            old = all.into_iter().take(excess).collect();
        }
        old.sort();
        for (_, k) in old {
            let at = self.conns[&k].last;
            self.close(k, "connection idle", at);
        }
        self.settle();
    }

    /// Move finished exchanges to the ordered buffer and release those no open request
    /// precedes.
    fn settle(&mut self) {
        for x in self.scratch.drain(..) {
            self.ready.insert(x.id, x);
        }
        let open = self
            .conns
            .values()
            .filter_map(|c| c.http.oldest_open())
            .min();
        self.release(open.unwrap_or(self.ids));
        // Bounded memory: past MAX_READY finished exchanges waiting behind an unfinished
        // request, the oldest go out anyway (the late one is numbered when it finishes).
        if self.ready.len() > MAX_READY {
            let excess = self.ready.len() - MAX_READY / 2;
            let last = self.ready.keys().nth(excess - 1).copied();
            self.release(last.map_or(0, |k| k + 1));
        }
    }

    /// Give `x` the next id of the trace; a WebSocket message names its upgrade by that
    /// upgrade's trace id (released before it: its id is lower).
    fn renumber(&mut self, x: &mut Exchange) {
        let was = x.id;
        x.id = self.emitted;
        self.emitted += 1;
        if x.notes.get("websocket").and_then(|v| v.as_str()) == Some("upgrade") {
            self.upgrades.insert(was, x.id);
        }
        if let Some(ws) = x.websocket.as_mut() {
            if let Some(&id) = self.upgrades.get(&ws.upgrade) {
                ws.upgrade = id;
            }
        }
    }

    fn release(&mut self, below: u64) {
        while let Some(entry) = self.ready.first_entry() {
            if *entry.key() >= below {
                break;
            }
            let mut x = entry.remove();
            self.renumber(&mut x);
            let s = &mut self.summary;
            s.exchanges += 1;
            s.messages_exchanges += u64::from(x.is_messages());
            s.websocket_messages += u64::from(x.websocket.is_some());
            if let Some(e) = &x.error {
                s.incomplete += 1;
                *s.errors.entry(e.kind.clone()).or_default() += 1;
            }
            self.out.push(x);
        }
    }
}
