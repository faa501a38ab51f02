// Package natsstore keeps threads in NATS JetStream: a thread.Store for
// users who outgrow one machine. Each thread is one subject, and each
// append one message on it — a record holding all the append's facts —
// published once, expecting the subject's last message to be the one the
// append follows (Nats-Expected-Last-Subject-Sequence). The server itself
// decides who appends after each head, with no lock between processes; an
// append is all or nothing because it is one message; the head is the
// subject's last message; a read streams the subject through an ordered
// consumer. The conformance suite in package storetest proves the store on
// a single server and on a 3-node cluster with 3 replicas.
//
// Beside the threads, the store leases each thread to one resumer at a time
// across processes (a thread.Leaser, in a key-value bucket), keeps the
// contents the workspace observer reads (an action.Blobs, in an object
// store), lists the threads in order (a key-value bucket), and hands the
// appends out as work to the processes that drive threads (Work, a
// durable consumer of the stream; see package worker).
//
// # Layout
//
// One stream (default "HARNESS", see WithStream) holds every thread, on
// subjects under a prefix (default "harness", see WithSubjects), and three
// buckets are named after it:
//
//	<stream>            the threads: records and parts (below); stream
//	                    metadata harness.schema = "2"
//	<stream>_LEASES     key-value bucket: one key per leased thread
//	                    (JetStream stream KV_<stream>_LEASES)
//	<stream>_BLOBS      object store: one object per kept content
//	                    (JetStream stream OBJ_<stream>_BLOBS)
//	<stream>_THREADS    key-value bucket: the thread index
//	                    (JetStream stream KV_<stream>_THREADS)
//	workers             durable consumer of <stream>'s thread subjects,
//	                    headers only: the queue of work (Work), made by
//	                    the first Work
//
// Open creates whichever does not exist yet (file storage, WithReplicas
// replicas). A bucket's name is letters, digits, '_' and '-', so the
// stream's must be too. A thread id may contain '.', the subject token
// separator, so it is written as lowercase hex:
//
//	<prefix>.t.<hex id>   the thread's records, one per append, in order
//	<prefix>.s.<hex id>   the parts of the thread's appends too large for
//	                      one message
//
// and, not bound by the stream (core NATS only, nothing stored):
//
//	<prefix>.p.<hex id>   the thread's progress records, published by the
//	                      holder of its lease (see Store.Progress)
//
// # Records
//
// A record is, in order: a version byte (1); its form (1: the facts are in
// the record, 2: in parts); the seq of its first fact and how many facts it
// holds, uvarints; the last fact's hash (32 bytes), kind (uvarint length,
// then the bytes) and time (int64 big-endian Unix nanoseconds) — the head
// after the append, readable without the facts; then either the facts, each
// a frame (uvarint length, then facts.Encode of the fact), or the parts:
// their count, and for each its stream seq and size (uvarints) and the
// SHA-256 of its bytes; and a CRC-32C of all that, 4 bytes little-endian.
// The facts of one append share one time.
//
// An append whose record would not fit a message (max_payload, 1 MiB by
// default, less the headers) — a fork of a long thread, a fact larger than
// a message — is first published in parts on the thread's stage subject:
// the frames of all its facts, cut into pieces of at most a message each.
// Then the record naming the parts is published on the thread's subject as
// any other. Parts no record names are never read: an append that died
// after its parts, or lost the race for its head, leaves them behind
// invisible (the stream denies deletes, so they stay, costing their bytes).
// A record names at most about max_payload/45 parts (some 23 GB of facts
// at 1 MiB), beyond which Append fails with ErrTooLarge.
//
// # How each call maps onto JetStream
//
// The store keeps, for each thread it has used, a view of the log (see
// state.go): the last record it read and its stream seq, the head after
// it, every cause with the seq of its first fact, and where each record
// is. The view is derived from the log alone, record by record in stream
// order, and holds whole records only; it is a cache of the log, never a
// second source of truth.
//
//   - Append(after) checks that the view's head is after, reading the
//     records the view lacks first if it is not (or if the view is empty),
//     and refuses a cause in the view (ErrDuplicateCause, reported before a
//     moved head, ErrConflict). It builds the record and publishes it once
//     on the thread's subject with Nats-Expected-Last-Subject-Sequence: the
//     stream seq of the view's last record (0 for a new thread). The server
//     stores it only if that is still the subject's last message: then the
//     log is exactly the view's records and this one, so the causes were
//     checked against the whole log it follows. If another record came
//     first, the server refuses; the view catches up and Append answers
//     ErrDuplicateCause or ErrConflict. A new thread (after 0) is first
//     added to the thread index.
//   - The record carries Nats-Msg-Id <thread>/<first cause>/<expected
//     seq>. A publish with no answer (a timeout, a leader change) is sent
//     again, same bytes, same headers: if the first was stored, the server
//     drops the retry as a duplicate, or refuses it because the subject has
//     moved on (to the first), and Append then finds its own record right
//     after the expected one and reports success. Including the expected
//     seq in the id means the server never mistakes a new append for an old
//     one: only a retry of the same append at the same place is dropped.
//     Append tries again while nobody answers for the stream, for up to the
//     store's timeout (WithTimeout); if it still has no answer and its
//     record is not there, it says the outcome is unknown.
//   - Head is one get: the last message on the thread's literal subject,
//     whose record names the head. The server finds it through its index of
//     subjects, however long the thread (BenchmarkHead: the same at 10 and
//     at 50k facts).
//   - HasCause gets the last record, brings the view up to it, and answers
//     from the view.
//   - Read gets the last record first and reads up to it, so facts appended
//     while it reads are not seen. It finds the record holding seq from in
//     the view, or, with none, by a binary search of the stream with gets
//     (the first record of the thread at or after a stream seq, one get per
//     halving). A read of at most 8 facts gets the records one by one;
//     a longer one streams them through an ordered consumer on the thread's
//     subject, 500 at a time, and deletes the consumer when done. A record's
//     parts are fetched one at a time, so memory is a buffer of records and
//     one part, whatever the thread's length. A read from the first fact
//     (or from the view's head) also fills the view.
//   - Verify reads every record from the first through the consumer (not
//     the view) and checks each record's checksum, its facts' checksums,
//     seqs and time, the link from the record before, the hash chain, that
//     the head the record names is its last fact's, each part's subject,
//     size and digest, and that no cause of a record was used by an earlier
//     record (the facts of one append may share a cause; two appends may
//     not).
//   - Threads reads the thread index: a sorted chain of leaves of up to 256
//     ids each, with a root that hints where each leaf starts (see
//     index.go), and the head of each thread on the page, eight gets at a
//     time. A page costs the root, the leaf or two holding it, and its
//     heads, however many threads there are. The root lists one entry per
//     leaf (about 40 bytes per 128 to 256 threads), so it fits a message up
//     to a few million threads.
//   - Lease creates the thread's key in <stream>_LEASES, with the TTL of
//     WithLeaseTTL (15 s by default), only if it is absent; while another
//     holds it, Lease watches the key and tries again when it is deleted or
//     runs out (and every third of the TTL). The holder renews the key every
//     third of the TTL, each write expecting the revision of its last. A
//     renewal refused (the key was taken) or none succeeding within two
//     thirds of the TTL cancels the holder's context with
//     thread.ErrLeaseLost. The holder checks every tenth of the TTL (at most
//     every 250 ms), by the wall clock as well as the monotonic one, so a
//     process resumed from a machine's suspend gives up at once. Release
//     cancels the holder's context first and then deletes the key if it is
//     still the holder's revision. A holder that dies keeps the lease until
//     its TTL runs out. Close releases the leases a store still holds. A
//     lease's key is the thread id in lowercase hex; its value is JSON
//     naming the holder for people to read (nats kv get): {"thread",
//     "host", "pid", "id", "since", "ttl"}.
//   - PutBlob looks the object up in <stream>_BLOBS (named by the SHA-256
//     of its bytes in lowercase hex, split by the object store into chunks
//     of at most 128 KiB) and writes it only if it is absent; GetBlob reads
//     it, reports a missing one as fs.ErrNotExist and checks the bytes
//     against the name, reporting a mismatch as thread.ErrCorrupt. PutBlob
//     trusts the object's metadata, so chunks damaged under correct
//     metadata are not repaired by putting the bytes again; a PutBlob of
//     bytes another process is putting at the same moment replaces that
//     process's chunks, so a GetBlob reading the first copy meanwhile may
//     fail; trying again reads the copy that stayed.
//   - Work makes (or updates) the durable consumer WorkConsumer on
//     <prefix>.t.>: deliver all, explicit acks, the ack wait of
//     WithAckWait, no limit on deliveries, headers only. Take is one pull
//     request of up to n jobs; a job's thread is its subject's, its cause
//     the first cause in its Nats-Msg-Id. Done acks, Later naks (with a
//     delay), Working says in progress; Followed is one get of the
//     thread's last record. A job not acked within the ack wait is given
//     to another process.
//
// # Causes and crashes
//
// A cause is unique in its thread for as long as the thread exists, not
// only within the server's duplicate window: Append checks it against the
// whole log, through the view, and the expected-sequence condition makes
// the check hold at the moment the record is stored. There is no second
// index to keep in step with the log: an append is one write. So no crash
// can leave a cause recorded without its fact or a fact without its cause
// being seen. A crash before the record is stored leaves nothing (or
// invisible parts); after, the record is the append. A writer whose
// answer was lost learns the outcome from the log, as above.
//
// The thread index is written before a new thread's first record, so it
// never lacks a thread with facts; a thread whose first append then failed
// is listed without facts, and Threads skips it. A leaf split writes the
// new leaf before linking it, so a crash in between leaves an unreachable
// leaf, never a missing id.
//
// # Cost
//
// An append is one publish when the store's view of the thread is current
// — always for the store that made the last append, and for any store once
// it has read the thread. BenchmarkAppend compares it with a conditional
// publish of the same bytes (same stream settings, the same headers) in
// the same run: about 0.8 to 0.9 of its rate with one writer, 0.6 to 0.9
// with 64 writers on 64 threads, on a loaded 2-core machine with the
// server in the same process. A view that is behind costs a get and the
// records it lacks; a thread the store has never read is read whole by the
// first Append or HasCause that needs it (as a resume reads it anyway): a
// 10k-fact thread in some tens of milliseconds. The view takes about 100
// bytes a fact; the cache keeps the views of the threads used last, up to
// WithCache facts in all (DefaultCache, 256k).
//
// Head is one get (about 50 µs locally, flat in the thread's length).
// Read of more than 8 facts is a get, a consumer and the stream of records:
// BenchmarkRead reads a 10k-fact thread at about 0.7 to 0.8 of an ordered
// consumer reading the same messages with a store that has not read it
// before, 0.7 to 0.9 with one that has. Threads is a few index gets and a
// get per thread on the page. A new thread costs two or three index
// requests more, once. A held lease costs a publish every third of its TTL;
// PutBlob of bytes already kept, one get.
//
// # Durability
//
// An acknowledged append is in the stream's files on as many servers as the
// stream has replicas (WithReplicas; a stream that exists keeps its own):
//
//   - One server: the append survives the server process dying (it is
//     written before the answer; TestAcknowledgedAppendsSurviveAKilledServer
//     kills one with SIGKILL). Against power loss, run the server with
//     sync_interval: always, so that it fsyncs each write before answering;
//     by default JetStream fsyncs every 2 minutes. The store cannot see the
//     server's setting (a client is not told it), so it is the operator's to
//     choose.
//   - A cluster with 3 replicas (the setting for production): an append is
//     acknowledged once a majority of the replicas stored it, so it survives
//     the loss of any one node; after the stream's leader goes away a new
//     leader, elected from the replicas that have every acknowledged append,
//     answers within moments and appends go on (TestClusterNodeKilled).
//
// Gets are answered by the stream leader, so a get sees every acknowledged
// append: this package creates the stream with AllowDirect off, and Open
// refuses an existing stream with AllowDirect or MirrorDirect on. A read's
// consumer may run on any replica; it reads up to the record the leader
// named at the start, waiting for a replica that lags. The stream denies
// deletes and purges and has no limits (retention by limits, none set, so
// no discard policy ever drops a message): nothing updates or deletes a
// fact, and Open refuses a stream that allows deletes or purges, has
// another retention, or limits age, messages or bytes.
//
// Dial's connection reconnects without limit and buffers nothing while
// disconnected: a publish then fails at once rather than being sent after
// the reconnection, when its caller may have given up on it (Append tries
// again itself, within its timeout). A connection passed to Open should be
// made the same way (nats.ReconnectBufSize(-1)). Dial may list every node
// of a cluster, comma-separated.
//
// Opening waits for the stream and each bucket to have a leader: after a
// node dies, the nodes left elect new leaders within seconds, and a
// request sent meanwhile is answered by nobody. Open (and Work) send each
// request again while it has no answer after half a second, keeping the
// earlier ones waiting, and again after a pause while the answer is that
// there is no leader yet, for up to WithOpenWait (20s); past it they fail
// with an error matching ErrNoLeader that says what to check. A store opens
// within about half a second of the election's end.
//
// The buckets are stored the same way, and a blob is stored when PutBlob
// returns. Should a lease's key be lost with a server's data, its holder
// learns it at its next renewal, within a third of the TTL, and another
// process may have taken the thread meanwhile; the expected-head appends
// still keep the log whole, but an action then in progress could run
// twice.
//
// # Layout 1
//
// Stores before this layout kept a subject per fact (<prefix>.f.<hex
// id>.<seq>) and a marker subject per cause (<prefix>.c.<hex id>.<digest>),
// and published each append as an atomic batch or a fact and then its
// marker (stream metadata harness.schema = "1"). Open refuses such a
// stream with an error matching ErrOldLayout; Migrate copies its threads
// into this layout in the same stream, resumably, fact for fact (seqs,
// times and hashes kept), and switches the stream's subjects so that the
// old store can no longer append.
package natsstore
