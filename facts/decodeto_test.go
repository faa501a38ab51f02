package facts

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"
	"time"
)

// FuzzDecodeTo decodes every input into one Fact, left as the input
// before it left it, and checks it against DecodeFact's fresh one: a
// field DecodeTo forgot to set (or to clear on an error) keeps the last
// record's value. Data, empty or nil, is alike.
func FuzzDecodeTo(f *testing.F) {
	for _, fa := range []Fact{
		{Thread: "t", Seq: 1, Kind: "a.b", Cause: "c/d", At: time.Unix(1, 0).UTC()},
		{Thread: "t", Seq: 2, Kind: "a.b", Cause: "c/dddddddddddddddd", At: time.Unix(1, 5).UTC(), Prev: Hash{1}, Data: []byte("xyz")},
	} {
		b, err := Encode(fa)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:len(b)-4]) // the record without its checksum: the fuzz sums it
	}
	var d Decoder
	var reused Fact
	f.Fuzz(func(t *testing.T, b []byte) {
		in := binary.LittleEndian.AppendUint32(bytes.Clone(b), crc32.Checksum(b, castagnoli))
		want, wantErr := DecodeFact("t", in)
		err := d.DecodeTo(&reused, "t", in)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("err %v want %v", err, wantErr)
		}
		if !reflect.DeepEqual(want, reused) && !(len(want.Data) == 0 && len(reused.Data) == 0) {
			t.Fatalf("got %+v want %+v", reused, want)
		}
	})
}
