package jsonarg

import (
	"math"
	"reflect"
	"strconv"
)

// setNumber stores the number lit into v, a field of an Int, Uint or
// Float node, or reports why it does not fit. An integer field takes any
// number whose value is an integer, however written (2, 2.0, 2e0), as
// JSON Schema's "integer" does.
func (d *decoder) setNumber(n *Node, v reflect.Value, lit []byte, enum []any) {
	switch n.Kind {
	case Float:
		bits := n.Type.Bits()
		if bits == 32 && !within(lit, maxFloat32, MaxFloat32Text) {
			d.fail("float_overflow", "Input should be a finite number within the range of "+n.Type.Kind().String())
			return
		}
		f, _ := strconv.ParseFloat(string(lit), bits)
		v.SetFloat(f)
		return
	}
	neg, mag, ok, over := integer(lit)
	if !ok {
		d.fail(typeName(n)+"_type", "Input should be "+expected(n))
		return
	}
	bits := n.Type.Bits()
	if n.Kind == Uint {
		if neg && (mag != 0 || over) {
			d.fail("uint_type", "Input should be "+expected(n))
			return
		}
		if over || bits < 64 && mag > math.MaxUint64>>(64-bits) {
			d.fail("uint_overflow", "Input should be within the range of "+n.Type.Kind().String())
			return
		}
		if enum != nil && !inEnum(enum, mag) {
			d.failEnum(enum)
			return
		}
		v.SetUint(mag)
		return
	}
	limit := uint64(1) << (bits - 1) // |min|; max is limit-1
	if over || !neg && mag >= limit || neg && mag > limit {
		d.fail("int_overflow", "Input should be within the range of "+n.Type.Kind().String())
		return
	}
	i := int64(mag)
	if neg {
		i = -i // mag == limit gives the minimum
	}
	if enum != nil && !inEnum(enum, i) {
		d.failEnum(enum)
		return
	}
	v.SetInt(i)
}

// integer returns the sign and magnitude of the number lit when its value
// is an integer (ok), and whether the magnitude is beyond a uint64 (over).
func integer(lit []byte) (neg bool, mag uint64, ok, over bool) {
	if len(lit) > 0 && lit[0] == '-' {
		neg, lit = true, lit[1:]
	}
	// The digits of the mantissa, without the point, and the power of ten
	// they are scaled by.
	var digits [MaxNumberLen]byte
	nd := 0
	exp := 0
	i := 0
	for ; i < len(lit) && lit[i] >= '0' && lit[i] <= '9'; i++ {
		digits[nd] = lit[i]
		nd++
	}
	if i < len(lit) && lit[i] == '.' {
		for i++; i < len(lit) && lit[i] >= '0' && lit[i] <= '9'; i++ {
			digits[nd] = lit[i]
			nd++
			exp--
		}
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		e, _ := strconv.Atoi(string(lit[i+1:])) // bounded by checkNumber
		exp += e
	}
	// Strip leading zeros and trailing zeros (into the exponent).
	ds := digits[:nd]
	for len(ds) > 0 && ds[0] == '0' {
		ds = ds[1:]
	}
	for len(ds) > 0 && ds[len(ds)-1] == '0' {
		ds = ds[:len(ds)-1]
		exp++
	}
	if len(ds) == 0 {
		return neg, 0, true, false
	}
	if exp < 0 {
		return neg, 0, false, false
	}
	if len(ds)+exp > 20 {
		return neg, 0, true, true
	}
	for range exp {
		ds = append(ds, '0')
	}
	mag, err := strconv.ParseUint(string(ds), 10, 64)
	if err != nil {
		return neg, 0, true, true
	}
	return neg, mag, true, false
}
