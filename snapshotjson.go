package r4c

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"time"
)

// MarshalJSON encodes the snapshot for people and dashboards: every field under its Go name, in
// declaration order; durations as Go duration strings ("250ms", "1m30s"); enumerations by name
// ("gradient2", "half_open"); a float that is not finite as null. It is what
// expvar.Func(func() any { return reg.Snapshot() }) publishes, and what docs/metrics.md shows.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := encodeReadable(&b, reflect.ValueOf(s)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// encodeReadable writes v as JSON with the rules of Snapshot.MarshalJSON. It knows the kinds the
// snapshots are made of: structs, slices, strings, booleans, numbers, and the enumerations
// (unsigned integers with a String method).
func encodeReadable(b *bytes.Buffer, v reflect.Value) error {
	t := v.Type()
	switch {
	case t == durationType:
		return encodePlain(b, time.Duration(v.Int()).String())
	case t.Kind() == reflect.Uint8 && t.Implements(stringerType):
		return encodePlain(b, v.Interface().(fmt.Stringer).String())
	}
	switch t.Kind() {
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			if err := encodePlain(b, f.Name); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := encodeReadable(b, v.Field(i)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeReadable(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			b.WriteString("null")
			return nil
		}
	}
	return encodePlain(b, v.Interface())
}

// encodePlain writes x with encoding/json.
func encodePlain(b *bytes.Buffer, x any) error {
	out, err := json.Marshal(x)
	if err != nil {
		return err
	}
	b.Write(out)
	return nil
}
