#include "textflag.h"

// func utf8Count(b []byte) (n int, ok bool)
//
// One loop, a step per iteration (utf8_other.go has the same steps in Go):
//   - twelve bytes or more left: eight ASCII bytes, or the ASCII bytes before
//     a character that is not ASCII and that character, whose four bytes are
//     readable (it starts among the eight);
//   - four to eleven left: the same with four bytes;
//   - fewer than four: one byte, and a character's bytes that are left, the
//     missing ones read as 0 (not a continuation byte, so a cut character
//     fails the checks).
// The character is checked from its four bytes x (the first in the low byte)
// as seqLen does: the well-formed sequences of Table 3-7 of the Unicode
// standard.
//
// R0 p, R1 end (p + len), R2 i, R3 n, R4 the high bits of the ASCII check,
// R5 x, R6 scratch.
TEXT ·utf8Count(SB), NOSPLIT, $0-33
	Get SP
	I64Load b_base+0(FP)
	Set R0
	Get SP
	I64Load b_len+8(FP)
	Set R1
	I64Const $0
	Set R2
	I64Const $0
	Set R3

	Block // done: every byte valid
	Block // bad
	Loop
		Block // x: R5 holds the character's four bytes, i is at its first
			Get R2
			I64Const $4
			I64Add
			Get R1
			I64GtS
			If
				// fewer than four bytes left
				Get R2
				Get R1
				I64GeS
				BrIf $4 // done
				Get R0
				Get R2
				I64Add
				I32WrapI64
				I64Load8U $0
				Tee R5
				I64Const $0x80
				I64LtU
				If
					Get R2
					I64Const $1
					I64Add
					Set R2
					Get R3
					I64Const $1
					I64Add
					Set R3
					Br $3 // next step
				End
				Get R2
				I64Const $1
				I64Add
				Get R1
				I64LtS
				If
					Get R0
					Get R2
					I64Add
					I32WrapI64
					I64Load8U $1
					I64Const $8
					I64Shl
					Get R5
					I64Or
					Set R5
				End
				Get R2
				I64Const $2
				I64Add
				Get R1
				I64LtS
				If
					Get R0
					Get R2
					I64Add
					I32WrapI64
					I64Load8U $2
					I64Const $16
					I64Shl
					Get R5
					I64Or
					Set R5
				End
				Br $1 // x
			End

			Get R2
			I64Const $12
			I64Add
			Get R1
			I64LeS
			If
				// twelve or more: the high bit of each of the eight at i
				Get R0
				Get R2
				I64Add
				I32WrapI64
				I64Load $0
				I64Const $0x8080808080808080
				I64And
				Tee R4
				I64Eqz
				If
					Get R2
					I64Const $8
					I64Add
					Set R2
					Get R3
					I64Const $8
					I64Add
					Set R3
					Br $3 // next step
				End
			Else
				// four to eleven: the high bit of each of the four at i
				Get R0
				Get R2
				I64Add
				I32WrapI64
				I64Load32U $0
				I64Const $0x80808080
				I64And
				Tee R4
				I64Eqz
				If
					Get R2
					I64Const $4
					I64Add
					Set R2
					Get R3
					I64Const $4
					I64Add
					Set R3
					Br $3 // next step
				End
			End

			// k ASCII bytes, then a character's first: i += k, n += k
			Get R4
			I64Ctz
			I64Const $3
			I64ShrU
			Tee R6
			Get R2
			I64Add
			Set R2
			Get R3
			Get R6
			I64Add
			Set R3
			// a character in the last three bytes: the next step's
			Get R2
			I64Const $4
			I64Add
			Get R1
			I64GtS
			BrIf $1 // next step
			Get R0
			Get R2
			I64Add
			I32WrapI64
			I64Load32U $0
			Set R5
		End

		// one character more, of 2, 3 or 4 bytes if x is one
		Get R3
		I64Const $1
		I64Add
		Set R3

		// 110xxxxx 10xxxxxx, not C0 or C1 (overlong)
		Get R5
		I64Const $0xc0e0
		I64And
		I64Const $0x80c0
		I64Eq
		If
			Get R5
			I64Const $0x1e
			I64And
			I64Eqz
			BrIf $2 // bad
			Get R2
			I64Const $2
			I64Add
			Set R2
			Br $1 // next step
		End

		// 1110xxxx 10xxxxxx 10xxxxxx, not E0 80-9F (overlong) or ED A0-BF
		// (surrogates)
		Get R5
		I64Const $0xc0c0f0
		I64And
		I64Const $0x8080e0
		I64Eq
		If
			Get R5
			I64Const $0x200f
			I64And
			Tee R6
			I64Eqz
			BrIf $2 // bad
			Get R6
			I64Const $0x200d
			I64Eq
			BrIf $2 // bad
			Get R2
			I64Const $3
			I64Add
			Set R2
			Br $1 // next step
		End

		// 11110xxx 10xxxxxx 10xxxxxx 10xxxxxx, U+10000 to U+10FFFF
		Get R5
		I64Const $0xc0c0c0f8
		I64And
		I64Const $0x808080f0
		I64Ne
		BrIf $1 // bad
		Get R5
		I64Const $7
		I64And
		I64Const $18
		I64Shl
		Get R5
		I64Const $8
		I64ShrU
		I64Const $0x3f
		I64And
		I64Const $12
		I64Shl
		I64Or
		Tee R6
		I64Const $0x10000
		I64LtU
		BrIf $1 // bad
		Get R6
		I64Const $0x10ffff
		I64GtU
		BrIf $1 // bad
		Get R2
		I64Const $4
		I64Add
		Set R2
		Br $0 // next step
	End
	End

	// bad
	Get SP
	Get R3
	I64Store n+24(FP)
	Get SP
	I64Const $0
	I64Store8 ok+32(FP)
	RET
	End

	// done
	Get SP
	Get R3
	I64Store n+24(FP)
	Get SP
	I64Const $1
	I64Store8 ok+32(FP)
	RET
