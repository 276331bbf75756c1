package peers

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
)

func init() {
	register(Peer{
		Name:     "raw-file",
		Open:     openRawFile,
		Baseline: true,
		Note:     "baseline, not a log: one write(2) of the records' bytes per call (each a 4-byte key length, a 4-byte value length, key, value), File.Sync (fsync) after it when durable; reads with pread through positions kept in memory",
	})
}

// rawFile is the least a log can do: append the bytes, sync when asked.
type rawFile struct {
	f       *os.File
	durable bool
	pos     []int64 // where each record starts; pos[len(pos)-1] is the end
	buf     []byte
}

const rawHeader = 8

func openRawFile(dir string, o Options) (Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "raw.log"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	r := &rawFile{f: f, durable: o.Durable, pos: []int64{0}}
	if err := r.load(); err != nil {
		_ = f.Close()
		return nil, err
	}
	return r, nil
}

// load finds the records of the file, and its end.
func (r *rawFile) load() error {
	data, err := io.ReadAll(r.f)
	if err != nil {
		return err
	}
	at := 0
	for at+rawHeader <= len(data) {
		n := rawHeader + int(binary.LittleEndian.Uint32(data[at:])) + int(binary.LittleEndian.Uint32(data[at+4:]))
		if at+n > len(data) {
			break
		}
		at += n
		r.pos = append(r.pos, int64(at))
	}
	_, err = r.f.Seek(int64(at), io.SeekStart)
	return err
}

// appendRaw appends recs to buf as raw-file writes them, to be written at
// end of the file, and the end of each to *pos.
func appendRaw(buf []byte, recs []Rec, end int64, pos *[]int64) []byte {
	for _, rec := range recs {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rec.Key)))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rec.Value)))
		buf = append(buf, rec.Key...)
		buf = append(buf, rec.Value...)
		*pos = append(*pos, end+int64(len(buf)))
	}
	return buf
}

func (r *rawFile) Append(recs []Rec) error {
	r.buf = appendRaw(r.buf[:0], recs, r.pos[len(r.pos)-1], &r.pos)
	if _, err := r.f.Write(r.buf); err != nil {
		r.pos = r.pos[:len(r.pos)-len(recs)]
		return err
	}
	if r.durable {
		return r.f.Sync()
	}
	return nil
}

// read reads records [i, j) into r.buf.
func (r *rawFile) read(i, j int64) ([]byte, error) {
	n := int(r.pos[j] - r.pos[i])
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	_, err := r.f.ReadAt(b, r.pos[i])
	return b, err
}

func (r *rawFile) record(b []byte) (key, value []byte) {
	k := int(binary.LittleEndian.Uint32(b))
	return b[rawHeader : rawHeader+k], b[rawHeader+k:]
}

func (r *rawFile) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	end := int64(len(r.pos) - 1)
	if from < 0 || from > end {
		return errMissing
	}
	const chunk = 4096 // records per read
	for i := from; i < end; i += chunk {
		j := min(i+chunk, end)
		b, err := r.read(i, j)
		if err != nil {
			return err
		}
		base := r.pos[i]
		for k := i; k < j; k++ {
			key, value := r.record(b[r.pos[k]-base : r.pos[k+1]-base])
			if !fn(k, key, value) {
				return nil
			}
		}
	}
	return nil
}

func (r *rawFile) Get(i int64, fn func(key, value []byte)) error {
	if i < 0 || i >= int64(len(r.pos)-1) {
		return errMissing
	}
	b, err := r.read(i, i+1)
	if err != nil {
		return err
	}
	fn(r.record(b))
	return nil
}

func (r *rawFile) Close() error {
	var err error
	if r.durable {
		err = r.f.Sync()
	}
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	return err
}
