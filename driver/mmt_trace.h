/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_trace.h - tracepoints of the mmt module (events/mmt/ in tracefs)
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mmt

#if !defined(_MMT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MMT_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(mmt_pmo_create,
	TP_PROTO(u64 bytes, u32 closures, u32 block_size),
	TP_ARGS(bytes, closures, block_size),
	TP_STRUCT__entry(
		__field(u64, bytes)
		__field(u32, closures)
		__field(u32, block_size)
	),
	TP_fast_assign(
		__entry->bytes = bytes;
		__entry->closures = closures;
		__entry->block_size = block_size;
	),
	TP_printk("bytes=%llu closures=%u block_size=%u",
		  __entry->bytes, __entry->closures, __entry->block_size)
);

TRACE_EVENT(mmt_pmo_destroy,
	TP_PROTO(u64 bytes, u32 closures),
	TP_ARGS(bytes, closures),
	TP_STRUCT__entry(
		__field(u64, bytes)
		__field(u32, closures)
	),
	TP_fast_assign(
		__entry->bytes = bytes;
		__entry->closures = closures;
	),
	TP_printk("bytes=%llu closures=%u", __entry->bytes, __entry->closures)
);

TRACE_EVENT(mmt_seal,
	TP_PROTO(u64 gua, u64 root_counter, u64 seq, u32 index),
	TP_ARGS(gua, root_counter, seq, index),
	TP_STRUCT__entry(
		__field(u64, gua)
		__field(u64, root_counter)
		__field(u64, seq)
		__field(u32, index)
	),
	TP_fast_assign(
		__entry->gua = gua;
		__entry->root_counter = root_counter;
		__entry->seq = seq;
		__entry->index = index;
	),
	TP_printk("gua=%#llx root_counter=%llu seq=%llu closure=%u",
		  __entry->gua, __entry->root_counter, __entry->seq,
		  __entry->index)
);

TRACE_EVENT(mmt_verify_fail,
	TP_PROTO(u64 gua, u32 index, int err),
	TP_ARGS(gua, index, err),
	TP_STRUCT__entry(
		__field(u64, gua)
		__field(u32, index)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->gua = gua;
		__entry->index = index;
		__entry->err = err;
	),
	TP_printk("gua=%#llx closure=%u err=%d", __entry->gua, __entry->index,
		  __entry->err)
);

#endif /* _MMT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE mmt_trace
#include <trace/define_trace.h>
