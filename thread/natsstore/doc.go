// Package natsstore keeps threads in NATS JetStream: a thread.Store for
// users who outgrow one machine. Every fact of a thread is a message on a
// subject of its own, named by the thread and the fact's seq, and every
// cause has a marker subject. Every message is published expecting its
// subject to be empty (Nats-Expected-Last-Subject-Sequence: 0), so the
// server itself decides who appends each seq and who uses each cause first,
// with no lock between processes. An append of several drafts is one
// JetStream atomic batch, applied whole or not at all; an append of one
// draft is a single message and then its marker (see "One draft: no
// batch"). The conformance suite in package storetest proves the store
// against an embedded server.
//
// Beside the threads, the store leases each thread to one resumer at a time
// across processes (a thread.Leaser, in a key-value bucket) and keeps the
// contents the workspace observer reads (an action.Blobs, in an object
// store).
//
// # Layout
//
// One stream (default "HARNESS", see WithStream) holds every thread, on
// subjects under a prefix (default "harness", see WithSubjects), and two
// buckets are named after it:
//
//	<stream>            the threads: facts and cause markers (below)
//	<stream>_LEASES     key-value bucket: one key per leased thread
//	                    (JetStream stream KV_<stream>_LEASES)
//	<stream>_BLOBS      object store: one object per kept content
//	                    (JetStream stream OBJ_<stream>_BLOBS)
//
// Open creates whichever of the three does not exist yet (file storage,
// WithReplicas replicas). A bucket's name is letters, digits, '_' and '-',
// so the stream's must be too. A thread
// id may contain '.', the subject token separator, so it is written as
// lowercase hex: hex keeps ids' byte order and uses no character a subject
// forbids.
//
//	<prefix>.f.<hex id>.<seq>       fact: facts.Encode of the fact (seq in
//	                                decimal, 1 for the first fact). Exactly
//	                                one message per subject.
//	<prefix>.c.<hex id>.<digest>    cause marker: the first fact of the
//	                                thread with the cause; digest is the
//	                                SHA-256 of the cause in hex. One message
//	                                per subject, see the marker format below.
//
// A marker is: a version byte (1); the seq of the first fact with the
// cause, uvarint; the cause's bytes; and a CRC-32C of all that, 4 bytes
// little-endian. The cause is kept so a lookup can tell its own marker from
// damage.
//
// A lease's key in <stream>_LEASES is the thread id in lowercase hex; its
// value is JSON naming the holder, for people to read (nats kv get):
// {"thread", "host", "pid", "id" (random, one per Lease call), "since",
// "ttl"}. The bucket keeps one revision per key and has limit markers
// (LimitMarkerTTL, one minute), so each write can carry a TTL of its own.
//
// A blob in <stream>_BLOBS is an object named by the SHA-256 of its bytes
// in lowercase hex. The object store splits it into chunks of at most
// 128 KiB, each one message, so a blob may be larger than max_payload, and
// records its own SHA-256 of the chunks.
//
// # How each call maps onto JetStream
//
//   - Append first settles the head: it gets the last message on
//     <prefix>.f.<hex id>.*, and if that fact was appended alone and its
//     cause's marker may be missing (see "One draft: no batch"), writes
//     the marker, expecting its subject empty (harmless if another did).
//     If the head is not after, Append answers ErrDuplicateCause if a
//     marker of one of its causes exists, else ErrConflict. Then:
//   - one draft: Append gets its cause's marker (ErrDuplicateCause if
//     there is one), publishes the fact alone on <prefix>.f.<hex id>.
//     <after+1> with the header Harness-Marker: after, and then the
//     cause's marker;
//   - several drafts: Append publishes one atomic batch: facts after+1 …
//     after+n on their fact subjects, and a marker for each cause the
//     append uses first.
//     Every message carries Nats-Expected-Last-Subject-Sequence: 0. The
//     fact subjects being empty means the head is still after (facts are
//     only ever written at the seq after a fact that exists, and never
//     deleted); the marker subjects being empty means no earlier append
//     used the causes. If the server refuses the message or batch, Append
//     settles the head again and looks to say which: a marker of one of
//     its causes (ErrDuplicateCause, the final answer) or a moved head
//     (ErrConflict); if neither, it tries again. A marker refused as
//     written but not there to read yet (with replicas, the server
//     refuses a subject that is being written) is tried again too, at
//     most 20 times in all with a growing pause.
//   - Head is a get of the last message on <prefix>.f.<hex id>.*. HasCause
//     gets that too, and then the marker's subject: the head first, since
//     only the head can lack its marker and markers are never removed, so
//     a cause in the log by the time HasCause starts is found in one or
//     the other. Neither scans anything.
//   - Read takes the head first and then gets the facts from, from+1, … up
//     to that head by subject, one at a time, so memory is one fact however
//     long the log, and facts appended meanwhile are not seen.
//   - Threads lists the subjects <prefix>.f.*.1 (one per thread: its first
//     fact) from the stream's state, sorts them by id and reads the heads of
//     one page. Every call lists every thread, whatever the page: a call
//     costs time and memory in proportion to the number of threads, and
//     listing them all in pages of k costs in proportion to threads²/k.
//   - Verify walks every fact, checking seqs, the hash chain and each
//     cause's marker: the first fact of each append with a cause (a fact
//     appended alone, or each cause of a batch, whose facts share one At)
//     must be the one its marker names, so a cause used again by a later
//     append is reported even when the marker names an earlier fact with
//     the cause. Only an unsettled head may have no marker. Two batches
//     with the same At, one right after the other, look like one to
//     Verify, which then does not notice a cause the second repeats.
//   - Lease creates the thread's key, with the TTL of WithLeaseTTL (15 s by
//     default), only if it is absent; while another holds it, Lease
//     watches the key and tries again when it is deleted or runs out (and
//     every third of the TTL). The holder renews the key every third of the
//     TTL, each write expecting the revision of its last. A renewal refused
//     (the key was taken) or none succeeding within two thirds of the TTL
//     cancels the holder's context with thread.ErrLeaseLost. The holder's
//     clock starts when it sends a write, before the server stores it and
//     starts the TTL, so the holder gives up at least a third of the TTL
//     before the server may let the key go. It checks every tenth of the
//     TTL (at most every 250 ms), by the wall clock as well as the
//     monotonic one, so a process resumed from a machine's suspend, whose
//     timers stood still, gives up at once; only a pause of the process
//     itself of more than a third of the TTL between two checks (a stop
//     signal, say) can let another take the lease before the holder
//     notices. Release cancels the holder's context first and then deletes
//     the key if it is still the holder's revision, so a waiter takes it
//     at once but never while the holder's context is live. A holder that
//     dies keeps the lease until its TTL runs out. Close releases the
//     leases a store still holds, in the same order.
//   - PutBlob looks the object up and writes it only if it is absent (or
//     its metadata does not give the size and digest of the bytes its name
//     says); GetBlob reads it and checks the bytes against the name,
//     reporting a mismatch as thread.ErrCorrupt. Two gaps: PutBlob trusts
//     the metadata, so chunks damaged under correct metadata are not
//     repaired by putting the bytes again (GetBlob still reports them;
//     checking would mean reading every blob back on every put); and a
//     PutBlob of bytes another process is putting at the same moment
//     replaces that process's chunks, so a GetBlob reading the first copy
//     meanwhile may wait for chunks that are gone, until its context's
//     deadline or the store's timeout, and fail. Trying again reads the
//     copy that stayed.
//
// # Why one message per fact in an atomic batch
//
// One message per append, holding all its facts, would be atomic without
// batches, but the cause markers would then need a second publish that a
// crash could lose, and a read from the middle of a thread could not find
// its starting message without a search. With one subject per fact every
// fact is addressable by its seq, and atomic batch publish (nats-server
// 2.12 or later, stream setting AllowAtomicPublish) makes the facts and
// markers of one append a single decision. A batch holds at most 1000
// messages by default (server limit max_batch_size), so an append is
// limited to about that many facts and causes; each message must fit the
// server's max_payload (1 MiB by default, raise it for larger facts).
//
// # One draft: no batch
//
// An append of one draft — most appends — publishes its fact alone,
// expecting the fact's subject to be empty, after checking its cause's
// marker, and then publishes the marker, also expecting it empty. The
// check holds because the publish succeeds only if the head did not move
// meanwhile. Such a fact carries the header Harness-Marker: after, and
// until its marker is written (or for good, if its writer died first) it
// is "unsettled". Every Append first settles the head — writes its marker
// if it is missing, which is harmless if another did — so only the head
// can be unsettled, and HasCause and Verify count an unsettled head's
// cause as marked.
//
// # Cost
//
// An append of several drafts is a get of the head and one atomic batch.
// The server stages every atomic batch of a file-backed stream before
// applying it, which costs about 2.5 ms on a development machine, and
// batches on one stream are applied one at a time. An append of one draft
// is four round trips (the head, the cause's marker, the fact, the new
// marker): about 0.25 ms, against about 40 µs for one plain acknowledged
// publish; BenchmarkAppend reports the ratio. Either kind costs a get, and
// maybe a publish, more when the head was appended alone by another store
// (its marker is looked up before settling). Head is one get (about 50 µs
// locally), HasCause one or two, Read one get per fact. A held lease costs
// a publish every third of its TTL and a timer every tenth; PutBlob of
// bytes already kept, one get.
//
// # Durability
//
// The stream uses file storage, so an append is written to the server's
// files when Append returns, and survives a crash of the server process.
// JetStream fsyncs those files every sync_interval (2 minutes by default),
// so against power loss run the server with sync_interval: always (one
// fsync per append's batch) or keep replicas: the replica count
// (WithReplicas, default 1) says on how many servers an acknowledged
// append is stored, and with 3 an append survives the loss of one. Gets
// are answered by the stream leader, so a read sees every acknowledged
// append: this package creates the stream with AllowDirect off, and Open
// refuses an existing stream with AllowDirect or MirrorDirect on. The
// stream denies deletes and purges and has no limits (retention by
// limits, none set, so no discard policy ever drops a message): nothing
// updates or deletes a fact, and Open refuses a stream that allows
// deletes or purges, has another retention, or limits age, messages or
// bytes.
//
// Dial's connection reconnects without limit and buffers nothing while
// disconnected: a publish then fails at once rather than being sent after
// the reconnection, when its caller may have given up on it. A connection
// passed to Open should be made the same way (nats.ReconnectBufSize(-1)).
//
// The buckets are stored the same way, and a blob is stored when PutBlob
// returns. Should a lease's key be lost with a server's data, its holder
// learns it at its next renewal, within a third of the TTL, and another
// process may have taken the thread meanwhile; the expected-head appends
// still keep the log whole, but an action then in progress could run
// twice.
package natsstore
