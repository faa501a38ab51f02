//go:build !purego

#include "textflag.h"

// func crcStreams(r uint32, p *byte, words int) (a, b, c uint32)
TEXT ·crcStreams(SB), NOSPLIT, $0-36
	MOVL r+0(FP), AX
	XORL BX, BX
	XORL CX, CX
	MOVQ p+8(FP), SI
	MOVQ words+16(FP), DX
	LEAQ (SI)(DX*8), DI
	LEAQ (DI)(DX*8), R8
	TESTQ DX, DX
	JZ done

loop:
	CRC32Q (SI), AX
	CRC32Q (DI), BX
	CRC32Q (R8), CX
	ADDQ $8, SI
	ADDQ $8, DI
	ADDQ $8, R8
	DECQ DX
	JNZ loop

done:
	MOVL AX, a+24(FP)
	MOVL BX, b+28(FP)
	MOVL CX, c+32(FP)
	RET

// func crcUpdate(r uint32, p []byte) uint32
TEXT ·crcUpdate(SB), NOSPLIT, $0-36
	MOVL r+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	CMPQ CX, $8
	JL   tail

words:
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
	CMPQ   CX, $8
	JGE    words

tail:
	TESTQ CX, CX
	JZ    end

bytes:
	CRC32B (SI), AX
	INCQ   SI
	DECQ   CX
	JNZ    bytes

end:
	MOVL AX, ret+32(FP)
	RET
