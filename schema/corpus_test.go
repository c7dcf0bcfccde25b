package schema

import (
	"encoding/json"
	"reflect"
	"time"
)

// The corpus: input types of the kinds tools take, each rendered for every
// profile into testdata/<name>.golden and checked by the differential test
// against the decoder.

type Flat struct {
	City    string  `json:"city"`
	Days    int     `json:"days"`
	Metric  bool    `json:"metric"`
	Ratio   float64 `json:"ratio"`
	Comment string  `json:"comment"`
}

type SmallInts struct {
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
}

type Optional struct {
	Query  string  `json:"query"`
	Limit  int     `json:"limit,omitempty"`
	Cursor string  `json:"cursor,omitzero"`
	Exact  bool    `json:"exact,omitempty"`
	Score  float32 `json:"score,omitempty"`
}

type Pointers struct {
	Name  *string  `json:"name"`
	Age   *int     `json:"age"`
	Ok    *bool    `json:"ok"`
	Price *float64 `json:"price"`
	Deep  **int    `json:"deep"`
}

type Address struct {
	Street string `json:"street" jsonschema:"Street and number"`
	City   string `json:"city"`
	Zip    string `json:"zip,omitempty"`
}

type Nested struct {
	Name     string   `json:"name"`
	Home     Address  `json:"home"`
	Work     *Address `json:"work"`
	Previous Address  `json:"previous,omitzero"`
}

type Line struct {
	SKU string `json:"sku"`
	Qty uint16 `json:"qty"`
}

type SliceOfStructs struct {
	Lines []Line  `json:"lines"`
	Gifts []*Line `json:"gifts,omitempty"`
}

type Slices struct {
	Tags   []string  `json:"tags"`
	Counts []int     `json:"counts,omitempty"`
	Grid   [][]bool  `json:"grid,omitempty"`
	Maybe  []*string `json:"maybe,omitempty"`
	Floats []float32 `json:"floats,omitempty"`
}

type Arrays struct {
	Point [2]float64 `json:"point"`
	RGB   [3]uint8   `json:"rgb,omitzero"`
	Pairs [2][2]int8 `json:"pairs,omitzero"`
	Empty [0]int     `json:"empty,omitzero"`
}

type Maps struct {
	Labels map[string]string `json:"labels"`
	Counts map[string]int    `json:"counts,omitempty"`
	Nested map[string][]Line `json:"nested,omitempty"`
}

type IntKeys struct {
	ByID    map[int]string    `json:"by_id"`
	BySmall map[uint8]bool    `json:"by_small,omitempty"`
	ByI16   map[int16]float64 `json:"by_i16,omitempty"`
}

type MapOfPointers struct {
	Refs map[string]*Address `json:"refs"`
}

type Enums struct {
	Cabin  string   `json:"cabin" enum:"economy,business,first" jsonschema:"Cabin class"`
	Seats  int      `json:"seats" enum:"1,2,3,4"`
	Meal   string   `json:"meal,omitempty" enum:"veg,vegan,none"`
	Extras []string `json:"extras,omitempty" enum:"wifi,lounge"`
	Refund bool     `json:"refund" enum:"false"`
	Class  *uint8   `json:"class" enum:"1,2"`
}

type Node struct {
	Name     string  `json:"name"`
	Children []*Node `json:"children,omitempty"`
}

type Recursive struct {
	Root Node `json:"root"`
}

type LinkedList struct {
	Value int         `json:"value"`
	Next  *LinkedList `json:"next"`
}

type Employee struct {
	Name    string     `json:"name"`
	Manager *Employee  `json:"manager,omitempty"`
	Reports []Employee `json:"reports,omitempty"`
}

type mutualA struct {
	B *mutualB `json:"b"`
	N int      `json:"n"`
}

type mutualB struct {
	A  *mutualA `json:"a"`
	OK bool     `json:"ok"`
}

type Mutual struct {
	Start mutualA `json:"start"`
}

type Base struct {
	ID      string `json:"id"`
	Created string `json:"created,omitempty"`
}

type Audit struct {
	By string `json:"by"`
}

type Embedded struct {
	Base
	*Audit
	Title string `json:"title"`
}

type Shadow struct {
	ID string `json:"id"` // shadows Base's
	Base
}

// inner1 and inner2 both promote X at the same depth, untagged: neither
// wins, as in encoding/json.
type inner1 struct {
	X int
}

type inner2 struct {
	X int
	Y int `json:"y"`
}

type Conflict struct {
	inner1
	inner2
	Z int `json:"z"`
}

type Times struct {
	At      time.Time   `json:"at"`
	Until   *time.Time  `json:"until"`
	Created time.Time   `json:"created,omitzero"`
	Slots   []time.Time `json:"slots,omitempty"`
}

type RawJSON struct {
	Payload json.RawMessage `json:"payload"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Any     any             `json:"any,omitempty"`
	List    []any           `json:"list,omitempty"`
}

type Bytes struct {
	Blob  []byte   `json:"blob"`
	Thumb []byte   `json:"thumb,omitempty"`
	Parts [][]byte `json:"parts,omitempty"`
}

type Celsius float64

type Level int8

type Named struct {
	Temp   Celsius          `json:"temp"`
	Level  Level            `json:"level"`
	Levels []Level          `json:"levels,omitempty"`
	Alias  map[string]Level `json:"alias,omitempty"`
}

type Untagged struct {
	Name  string
	Count int
	Note  string `json:",omitempty"`
}

type Ignored struct {
	Keep    string   `json:"keep"`
	Skip    string   `json:"-"`
	private string   //lint:ignore U1000 shows that unexported fields are ignored
	Fn      func()   `json:"fn"`
	Ch      chan int `json:"ch,omitempty"`
	Quoted  int      `json:"quoted,string"`
}

type Empty struct{}

type OnlyOptional struct {
	A *string `json:"a"`
	B int     `json:"b,omitempty"`
}

type Described struct {
	Query string `json:"query" jsonschema:"What to search for, in plain words"`
	Page  *int   `json:"page" jsonschema:"1-based page number"`
	Sort  string `json:"sort,omitempty" enum:"relevance,date" jsonschema:"Order of results"`
}

type Deep struct {
	L1 struct {
		L2 struct {
			L3 struct {
				L4 struct {
					Value string `json:"value"`
				} `json:"l4"`
			} `json:"l3"`
		} `json:"l2"`
	} `json:"l1"`
}

type Booking struct {
	Customer string            `json:"customer" jsonschema:"Customer id"`
	Flights  []Flight          `json:"flights"`
	Cabin    string            `json:"cabin" enum:"economy,business"`
	Notes    *string           `json:"notes"`
	Extras   map[string]string `json:"extras,omitempty"`
	When     time.Time         `json:"when"`
	Adults   uint8             `json:"adults"`
}

type Flight struct {
	From string `json:"from"`
	To   string `json:"to"`
	Day  string `json:"day"`
}

type MixedOptional struct {
	Required []Line  `json:"required"`
	Optional []Line  `json:"optional,omitempty"`
	Ptr      *[]Line `json:"ptr"`
	Struct   *Line   `json:"struct"`
	Value    Line    `json:"value,omitzero"`
}

type Unicode struct {
	Name  string `json:"名前"`
	Emoji string `json:"emoji,omitempty"`
}

// corpus lists the types with their golden names.
var corpus = []struct {
	name string
	typ  reflect.Type
}{
	{"flat", reflect.TypeFor[Flat]()},
	{"small_ints", reflect.TypeFor[SmallInts]()},
	{"optional", reflect.TypeFor[Optional]()},
	{"pointers", reflect.TypeFor[Pointers]()},
	{"nested", reflect.TypeFor[Nested]()},
	{"slice_of_structs", reflect.TypeFor[SliceOfStructs]()},
	{"slices", reflect.TypeFor[Slices]()},
	{"arrays", reflect.TypeFor[Arrays]()},
	{"maps", reflect.TypeFor[Maps]()},
	{"int_keys", reflect.TypeFor[IntKeys]()},
	{"map_of_pointers", reflect.TypeFor[MapOfPointers]()},
	{"enums", reflect.TypeFor[Enums]()},
	{"recursive", reflect.TypeFor[Recursive]()},
	{"recursive_root", reflect.TypeFor[Node]()},
	{"linked_list", reflect.TypeFor[LinkedList]()},
	{"employee", reflect.TypeFor[Employee]()},
	{"mutual", reflect.TypeFor[Mutual]()},
	{"embedded", reflect.TypeFor[Embedded]()},
	{"shadow", reflect.TypeFor[Shadow]()},
	{"conflict", reflect.TypeFor[Conflict]()},
	{"times", reflect.TypeFor[Times]()},
	{"raw_json", reflect.TypeFor[RawJSON]()},
	{"bytes", reflect.TypeFor[Bytes]()},
	{"named", reflect.TypeFor[Named]()},
	{"untagged", reflect.TypeFor[Untagged]()},
	{"ignored", reflect.TypeFor[Ignored]()},
	{"empty", reflect.TypeFor[Empty]()},
	{"only_optional", reflect.TypeFor[OnlyOptional]()},
	{"described", reflect.TypeFor[Described]()},
	{"deep", reflect.TypeFor[Deep]()},
	{"booking", reflect.TypeFor[Booking]()},
	{"mixed_optional", reflect.TypeFor[MixedOptional]()},
	{"unicode", reflect.TypeFor[Unicode]()},
	{"map_root", reflect.TypeFor[map[string]Line]()},
}
