/*
 * tc_redis_lua.c: the Lua scripts behind every write and every tag query,
 * and EVALSHA with a reload on NOSCRIPT.
 *
 * Every script works inside one shard: all the keys it touches share the
 * shard's hash tag (one cluster slot), so each script is atomic, and on a
 * cluster it runs on the node that owns the slot. H (the shard's key
 * prefix, "<prefix>{<hashtag>}") comes in ARGV[1]; KEYS[1] is a key of the
 * shard, for routing.
 *
 *   H.."e:"..id    STRING  the entry record (tc_redis_cmd.c): version,
 *                          codec, expire, mtime, its tags, the value
 *   H.."t:"..tag   ZSET    ids carrying the tag, scored by expire
 *   H.."i"         ZSET    every id, scored by expire
 *   H.."T"         ZSET    every tag, scored by its longest expire
 *   H.."x:"..n     ZSET    a clean's or a listing's working set (600 s TTL)
 *
 * Index keys (t:, i, T) expire with their longest-lived member: a key's
 * TTL is kept at least max(score - now, 0) + grace, and a key holding a
 * forever member has none. So when every entry of a tag has expired, its
 * metadata expires too, clean('old') or not. Members that expired long ago
 * (score < now - grace - 1, their entries are gone) are trimmed by the saves
 * that touch the key and by clean('old').
 *
 * Keys: every key a script knows before it runs is declared in KEYS (so a
 * cluster node can answer MOVED, ASK or TRYAGAIN before anything runs);
 * the tags an entry had before are read from its record and not declared.
 *
 * Order: a script can stop half-way (a slot migrating under it on a
 * cluster, where an undeclared key may be refused). Every script therefore
 * writes an entry's links before the entry, and the entry before it
 * removes links it no longer has; it removes an entry before its links: stopped anywhere, it leaves at most a stale link
 * (an id listed under a tag it no longer carries: a clean by that tag
 * removes one entry too many), never an entry a clean cannot reach.
 *
 * Time: scripts get "now" from the client (the same clock that computed
 * the expiries) and only ever set relative TTLs (EXPIRE, SET EX), so the
 * server's clock does not matter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tc_redis.h"

/* ----------------------------------------------------------------- sha1 */

typedef struct {
	uint32_t h[5];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
} sha1_ctx;

#define ROL(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

static void sha1_block(sha1_ctx *c, const unsigned char *p)
{
	uint32_t w[80], a, b, d, e, f, k, t, cc;
	int i;

	for (i = 0; i < 16; i++) {
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	}
	for (i = 16; i < 80; i++) {
		w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	}
	a = c->h[0];
	b = c->h[1];
	cc = c->h[2];
	d = c->h[3];
	e = c->h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20) {
			f = (b & cc) | (~b & d);
			k = 0x5A827999;
		} else if (i < 40) {
			f = b ^ cc ^ d;
			k = 0x6ED9EBA1;
		} else if (i < 60) {
			f = (b & cc) | (b & d) | (cc & d);
			k = 0x8F1BBCDC;
		} else {
			f = b ^ cc ^ d;
			k = 0xCA62C1D6;
		}
		t = ROL(a, 5) + f + e + k + w[i];
		e = d;
		d = cc;
		cc = ROL(b, 30);
		b = a;
		a = t;
	}
	c->h[0] += a;
	c->h[1] += b;
	c->h[2] += cc;
	c->h[3] += d;
	c->h[4] += e;
}

static void sha1_hex(const char *s, size_t len, char out[41])
{
	sha1_ctx c = {{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0}, 0, {0}, 0};
	const unsigned char *p = (const unsigned char *)s;
	unsigned char pad[72];
	size_t i, padlen;
	uint64_t bits = (uint64_t)len * 8;

	for (i = 0; i + 64 <= len; i += 64) {
		sha1_block(&c, p + i);
	}
	memcpy(c.buf, p + i, len - i);
	c.n = len - i;
	padlen = c.n < 56 ? 56 - c.n : 120 - c.n;
	memset(pad, 0, sizeof(pad));
	pad[0] = 0x80;
	{
		unsigned char tail[128];
		size_t tl = c.n + padlen + 8;

		memcpy(tail, c.buf, c.n);
		memcpy(tail + c.n, pad, padlen);
		for (i = 0; i < 8; i++) {
			tail[c.n + padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
		}
		for (i = 0; i < tl; i += 64) {
			sha1_block(&c, tail + i);
		}
	}
	for (i = 0; i < 5; i++) {
		snprintf(out + 8 * i, 9, "%08x", c.h[i]);
	}
}

/* -------------------------------------------------------------- scripts */

#define PRELUDE \
"local NEVER = 9999999999\n" \
/* expire, mtime and tags of an entry record, nil when there is none */ \
"local function hdr(k)\n" \
"  local h = redis.call('GETRANGE', k, 0, 25)\n" \
"  if #h < 26 or string.byte(h, 1) ~= 1 then return nil end\n" \
"  local e = struct.unpack('<d', h, 3)\n" \
"  local m = struct.unpack('<d', h, 11)\n" \
"  local tl = struct.unpack('<I4', h, 19)\n" \
"  local tags = {}\n" \
"  if tl > 0 then\n" \
"    local tb = redis.call('GETRANGE', k, 26, 25 + tl)\n" \
"    local p, n = 1, #tb\n" \
"    while p + 1 <= n do\n" \
"      local l = struct.unpack('<I2', tb, p)\n" \
"      tags[#tags + 1] = string.sub(tb, p + 2, p + 1 + l)\n" \
"      p = p + 2 + l\n" \
"    end\n" \
"  end\n" \
"  return e, m, tags\n" \
"end\n" \
"local function ttl_for(s, now, grace)\n" \
"  local t = math.max(s - now, 0) + grace\n" \
"  if t < 1 then t = 1 end\n" \
"  return t\n" \
"end\n" \
/* an index key outlives its members' entries by 2 s (second rounding) */ \
"local function ittl(s, now, grace)\n" \
"  return ttl_for(s, now, grace) + 2\n" \
"end\n" \
/* seconds of slack for a lifetime: 1/16 of it, at most a minute */ \
"local function slack(s, now)\n" \
"  return math.min(60, math.floor(math.max(s - now, 0) / 16))\n" \
"end\n" \
/* member mb of index key k now has score s; the key lives at least as
 * long. A TTL that must grow grows by some slack more, so that a stream of
 * saves refreshes it now and then, not every time; returns true when it
 * did (the time to trim the key's long-expired members too). */ \
"local function add(k, mb, s, now, grace)\n" \
"  local ttl = redis.call('TTL', k)\n" \
"  redis.call('ZADD', k, s, mb)\n" \
"  if s >= NEVER then\n" \
"    if ttl >= 0 then redis.call('PERSIST', k) end\n" \
"    return false\n" \
"  end\n" \
"  local need = ittl(s, now, grace)\n" \
"  if ttl == -2 or (ttl >= 0 and ttl < need) then\n" \
"    redis.call('EXPIRE', k, need + slack(s, now))\n" \
"    return true\n" \
"  end\n" \
"  return false\n" \
"end\n" \
/* the TTL of k from its largest score (after its longest-lived member
 * left); returns that score */ \
"local function settle(k, now, grace)\n" \
"  local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')\n" \
"  if #top == 0 then return nil end\n" \
"  local ts = tonumber(top[2])\n" \
"  if ts >= NEVER then redis.call('PERSIST', k) else redis.call('EXPIRE', k, ittl(ts, now, grace)) end\n" \
"  return ts\n" \
"end\n" \
/* takes mb out of index key k. When mb was its longest-lived member, the
 * key's TTL (and the tag's score in the registry rk) follow the next one
 * down; an emptied tag leaves the registry. */ \
"local function unlink(k, mb, rk, name, now, grace)\n" \
"  local s = redis.call('ZSCORE', k, mb)\n" \
"  if not s then return end\n" \
"  redis.call('ZREM', k, mb)\n" \
"  local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')\n" \
"  if #top == 0 then\n" \
"    if rk then unlink(rk, name, nil, nil, now, grace) end\n" \
"  elseif tonumber(s) > tonumber(top[2]) then\n" \
"    local ts = settle(k, now, grace)\n" \
"    if rk and ts then\n" \
"      local rs = redis.call('ZSCORE', rk, name)\n" \
"      if rs and tonumber(rs) > ts then\n" \
"        redis.call('ZADD', rk, ts, name)\n" \
"        if tonumber(rs) >= tonumber(redis.call('ZRANGE', rk, -1, -1, 'WITHSCORES')[2]) then settle(rk, now, grace) end\n" \
"      end\n" \
"    end\n" \
"  end\n" \
"end\n" \
/* removes an entry, then its links (see "order" above) */ \
"local function drop(H, id, now, grace)\n" \
"  local ek = H .. 'e:' .. id\n" \
"  local e, m, tags = hdr(ek)\n" \
"  local n = redis.call('DEL', ek)\n" \
"  unlink(H .. 'i', id, nil, nil, now, grace)\n" \
"  if tags then\n" \
"    for _, t in ipairs(tags) do unlink(H .. 't:' .. t, id, H .. 'T', t, now, grace) end\n" \
"  end\n" \
"  return n\n" \
"end\n"

/* KEYS: entry, id index, tag registry, the new tags' keys;
 * ARGV: H, id, record, expire, now, grace, tags... */
static const char lua_save[] = PRELUDE
"local H, id, rec = ARGV[1], ARGV[2], ARGV[3]\n"
"local s, now, grace = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])\n"
"local ek, ik, rk = KEYS[1], H .. 'i', H .. 'T'\n"
"local oe, om, old = hdr(ek)\n"
"local lost_forever = oe and oe >= NEVER and s < NEVER\n"
"local old_cut = '(' .. (now - grace - 1)\n"
/* the first write is a ZADD, refused when Redis is out of memory (once a
 * script has written, Redis lets it go on past maxmemory) */
"if add(ik, id, s, now, grace) then redis.call('ZREMRANGEBYSCORE', ik, '-inf', old_cut) end\n"
"if lost_forever then settle(ik, now, grace) end\n"
"local n = #ARGV - 6\n"
"if n > 0 then\n"
/* registry scores are rounded up by the slack: a tag saved often is
 * written to the registry now and then, not every time */
"  local rs = redis.call('ZMSCORE', rk, unpack(ARGV, 7))\n"
"  local rsc = s\n"
"  if s < NEVER then\n"
"    local g = math.max(1, slack(s, now))\n"
"    rsc = math.ceil(s / g) * g\n"
"  end\n"
"  for i = 1, n do\n"
"    local t = ARGV[6 + i]\n"
"    local tk = H .. 't:' .. t\n"
"    if add(tk, id, s, now, grace) then redis.call('ZREMRANGEBYSCORE', tk, '-inf', old_cut) end\n"
"    if lost_forever then settle(tk, now, grace) end\n"
"    if not rs[i] or tonumber(rs[i]) < s then add(rk, t, rsc, now, grace) end\n"
"  end\n"
"end\n"
"if s >= NEVER then\n"
"  redis.call('SET', ek, rec)\n"
"else\n"
"  redis.call('SET', ek, rec, 'EX', ttl_for(s, now, grace))\n"
"end\n"
"if old then\n"
"  local keep = {}\n"
"  for i = 7, #ARGV do keep[ARGV[i]] = true end\n"
"  for _, t in ipairs(old) do\n"
"    if not keep[t] then unlink(H .. 't:' .. t, id, rk, t, now, grace) end\n"
"  end\n"
"end\n"
"return 1\n";

/* KEYS: entry, id index, tag registry; ARGV: H, id, now, grace */
static const char lua_remove[] = PRELUDE
"return drop(ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))\n";

/* KEYS: id index, tag registry, working set, the tags' keys;
 * ARGV: H, mode, now, grace, chunk, phase, tags...
 * mode: any | all | not (tag modes, through a working set), old, flush.
 * Removes at most chunk entries; returns what is left to do (0: done). */
static const char lua_clean[] = PRELUDE
"local H, mode = ARGV[1], ARGV[2]\n"
"local now, grace, chunk = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])\n"
"local tmp, phase = KEYS[3], ARGV[6]\n"
"local ik, rk = H .. 'i', H .. 'T'\n"
"if mode == 'old' then\n"
"  local ids = redis.call('ZRANGEBYSCORE', ik, '-inf', '(' .. now, 'LIMIT', 0, chunk)\n"
"  for _, id in ipairs(ids) do drop(H, id, now, grace) end\n"
"  return #ids\n"
"end\n"
"if mode == 'flush' then\n"
"  local ids = redis.call('ZRANGE', ik, 0, chunk - 1)\n"
"  for _, id in ipairs(ids) do drop(H, id, now, grace) end\n"
"  if #ids > 0 then return #ids end\n"
"  local work = 0\n"
"  local tags = redis.call('ZRANGE', rk, 0, chunk - 1)\n"
"  for _, t in ipairs(tags) do\n"
"    local tk = H .. 't:' .. t\n"
"    local mbs = redis.call('ZRANGE', tk, 0, chunk - 1)\n"
"    for _, id in ipairs(mbs) do drop(H, id, now, grace); redis.call('ZREM', tk, id) end\n"
"    work = work + #mbs\n"
"    if redis.call('EXISTS', tk) == 0 then redis.call('ZREM', rk, t); work = work + 1 end\n"
"    if work >= chunk then return work end\n"
"  end\n"
"  return work\n"
"end\n"
"if phase == '0' then\n"
/* a DEL first: a clean frees memory, it must run when Redis is full, and
 * Redis refuses only a script's first write when out of memory */
"  redis.call('DEL', tmp)\n"
"  local keys = {}\n"
"  for i = 7, #ARGV do keys[#keys + 1] = H .. 't:' .. ARGV[i] end\n"
"  if mode == 'any' then redis.call('ZUNIONSTORE', tmp, #keys, unpack(keys))\n"
"  elseif mode == 'all' then redis.call('ZINTERSTORE', tmp, #keys, unpack(keys))\n"
"  else redis.call('ZDIFFSTORE', tmp, #keys + 1, ik, unpack(keys)) end\n"
"  redis.call('EXPIRE', tmp, 600)\n"
"end\n"
"local ids = redis.call('ZRANGE', tmp, 0, chunk - 1)\n"
"for _, id in ipairs(ids) do drop(H, id, now, grace) end\n"
"if #ids > 0 then redis.call('ZREMRANGEBYRANK', tmp, 0, #ids - 1) end\n"
"return redis.call('ZCARD', tmp)\n";

/* KEYS: id index, working set, the tags' keys; ARGV: H, mode, now, offset,
 * count, tags...
 * mode: all | any | all_of | not. One page of live ids; the working set of
 * the tag modes is made on the first page and dropped after the last. */
static const char lua_ids[] =
"local H, mode, now = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
"local tmp, off, cnt = KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5])\n"
"local ik = H .. 'i'\n"
"local src = ik\n"
"if mode ~= 'all' then\n"
"  src = tmp\n"
"  if off == 0 then\n"
"    redis.call('DEL', tmp)\n"
"    local keys = {}\n"
"    for i = 6, #ARGV do keys[#keys + 1] = H .. 't:' .. ARGV[i] end\n"
"    local n = #keys\n"
"    if mode == 'not' then\n"
"      redis.call('ZDIFFSTORE', tmp, n + 1, ik, unpack(keys))\n"
"    else\n"
/* scores are expiries: keep them (not their sum) to filter live ids */
"      keys[n + 1] = 'AGGREGATE'\n"
"      if mode == 'any' then\n"
"        keys[n + 2] = 'MAX'\n"
"        redis.call('ZUNIONSTORE', tmp, n, unpack(keys))\n"
"      else\n"
"        keys[n + 2] = 'MIN'\n"
"        redis.call('ZINTERSTORE', tmp, n, unpack(keys))\n"
"      end\n"
"    end\n"
"    redis.call('EXPIRE', tmp, 600)\n"
"  end\n"
"end\n"
"local page = redis.call('ZRANGEBYSCORE', src, now, '+inf', 'LIMIT', off, cnt)\n"
"if src == tmp and #page < cnt then redis.call('DEL', tmp) end\n"
"return page\n";

/* KEYS: entry, id index, tag registry; ARGV: H, id, extra, now, grace,
 * force_expired. A later expiry goes to the index scores before the
 * record, an earlier one after it: half-done, the scores are never below
 * the record's expiry, so trimming cannot drop a link too early. */
static const char lua_touch[] = PRELUDE
"local H, id = ARGV[1], ARGV[2]\n"
"local extra, now, grace, force = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'\n"
"local ek = KEYS[1]\n"
"local e, m, tags = hdr(ek)\n"
"if not e then return 0 end\n"
"local ne\n"
"if force then\n"
"  ne = now - 1\n"
"else\n"
"  if e < now then return 0 end\n"
"  if e >= NEVER then return 1 end\n"
"  ne = e + extra\n"
"  if ne < now - 1 then ne = now - 1 end\n"
"  redis.call('SETRANGE', ek, 10, struct.pack('<d', now))\n"
"end\n"
"local function record()\n"
"  redis.call('SETRANGE', ek, 2, struct.pack('<d', ne))\n"
"  redis.call('EXPIRE', ek, ttl_for(ne, now, grace))\n"
"end\n"
"if ne < e then record() end\n"
"local rk = H .. 'T'\n"
"add(H .. 'i', id, ne, now, grace)\n"
"if e >= NEVER then settle(H .. 'i', now, grace) end\n"
"for _, t in ipairs(tags) do\n"
"  local tk = H .. 't:' .. t\n"
"  add(tk, id, ne, now, grace)\n"
"  if e >= NEVER then settle(tk, now, grace) end\n"
"  local cur = redis.call('ZSCORE', rk, t)\n"
"  if not cur or tonumber(cur) < ne then add(rk, t, ne, now, grace) end\n"
"end\n"
"if ne >= e then record() end\n"
"return 1\n";

/* KEYS[1] entry: its header and tags, without the value */
static const char lua_meta[] =
"local h = redis.call('GETRANGE', KEYS[1], 0, 25)\n"
"if #h < 26 then return false end\n"
"if string.byte(h, 1) ~= 1 then return h end\n"
"local tl = struct.unpack('<I4', h, 19)\n"
"if tl == 0 then return h end\n"
"return h .. redis.call('GETRANGE', KEYS[1], 26, 25 + tl)\n";

/* KEYS: entry, id index; ARGV: H, id, now, grace, read_only.
 * A load that also checks the entry's links: under an eviction policy
 * Redis may evict a tag's key (which a later save may create again,
 * without this entry) and keep an entry that a clean by that tag could
 * then never reach. Such an entry is a miss (and removed, on a master).
 * Membership, not key existence, is what is checked, for that reason. */
static const char lua_loadv[] = PRELUDE
"local v = redis.call('GET', KEYS[1])\n"
"if not v then return false end\n"
"if #v < 26 or string.byte(v, 1) ~= 1 then return v end\n"
"local H, now = ARGV[1], tonumber(ARGV[3])\n"
"local e = struct.unpack('<d', v, 3)\n"
"if e < now then return v end\n"
"local tl = struct.unpack('<I4', v, 19)\n"
"local id = ARGV[2]\n"
"local ok = redis.call('ZSCORE', H .. 'i', id)\n"
"local p, stop = 27, 26 + tl\n"
"while ok and p + 1 <= stop do\n"
"  local l = struct.unpack('<I2', v, p)\n"
"  ok = redis.call('ZSCORE', H .. 't:' .. string.sub(v, p + 2, p + 1 + l), id)\n"
"  p = p + 2 + l\n"
"end\n"
"if ok then return v end\n"
"if ARGV[5] ~= '1' then drop(H, id, now, tonumber(ARGV[4])) end\n"
"return false\n";

/* KEYS: tag registry, id index; ARGV: H, now, grace, offset, count, chunk.
 * clean('old'), second pass: expired members of every tag, with their
 * entries; tags left empty leave the registry. Returns {tags seen, tags
 * kept}. */
static const char lua_gctags[] = PRELUDE
"local H, now, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
"local off, cnt, chunk = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])\n"
"local rk = KEYS[1]\n"
"local tags = redis.call('ZRANGE', rk, off, off + cnt - 1)\n"
"local kept, work = 0, 0\n"
"for _, t in ipairs(tags) do\n"
"  local tk = H .. 't:' .. t\n"
"  if work < chunk then\n"
"    local ids = redis.call('ZRANGEBYSCORE', tk, '-inf', '(' .. now, 'LIMIT', 0, chunk - work)\n"
"    for _, id in ipairs(ids) do drop(H, id, now, grace); redis.call('ZREM', tk, id) end\n"
"    work = work + #ids\n"
"  end\n"
"  if redis.call('EXISTS', tk) == 0 then unlink(rk, t, nil, nil, now, grace) else kept = kept + 1 end\n"
"end\n"
"return {#tags, kept}\n";

/* KEYS: id index, tag registry; ARGV: H, now, grace, ids... (entries found
 * by SCAN).
 * Problems, one string each: an entry live or expired less than grace ago
 * without its links, an index key that would expire before its entry. */
static const char lua_verify[] = PRELUDE
"local H, now, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
"local ik, rk = H .. 'i', H .. 'T'\n"
"local out = {}\n"
"local function keyttl(k)\n"
"  local t = redis.call('PTTL', k)\n"
"  if t == -1 then return math.huge end\n"
"  return t\n"
"end\n"
"for i = 4, #ARGV do\n"
"  local id = ARGV[i]\n"
"  local ek = H .. 'e:' .. id\n"
"  local e, m, tags = hdr(ek)\n"
"  if not e then\n"
"    if redis.call('EXISTS', ek) == 1 then out[#out + 1] = 'entry ' .. id .. ': unreadable record' end\n"
"  elseif e >= now - grace - 1 then\n"
"    local et = keyttl(ek)\n"
"    if (e >= NEVER) ~= (et == math.huge) then out[#out + 1] = 'entry ' .. id .. ': TTL does not match its expire' end\n"
"    local si = redis.call('ZSCORE', ik, id)\n"
"    if not si then out[#out + 1] = 'entry ' .. id .. ': not in the id index'\n"
"    elseif tonumber(si) ~= e then out[#out + 1] = 'entry ' .. id .. ': id index score ' .. si .. ' is not its expire ' .. e\n"
"    elseif keyttl(ik) + 1000 < et then out[#out + 1] = 'entry ' .. id .. ': the id index expires before it' end\n"
"    for _, t in ipairs(tags) do\n"
"      local tk = H .. 't:' .. t\n"
"      local st = redis.call('ZSCORE', tk, id)\n"
"      if not st then out[#out + 1] = 'entry ' .. id .. ': no link in tag ' .. t\n"
"      elseif tonumber(st) ~= e then out[#out + 1] = 'entry ' .. id .. ': tag ' .. t .. ' score ' .. st .. ' is not its expire ' .. e\n"
"      elseif keyttl(tk) + 1000 < et then out[#out + 1] = 'entry ' .. id .. ': tag ' .. t .. ' expires before it' end\n"
"      if not redis.call('ZSCORE', rk, t) then out[#out + 1] = 'tag ' .. t .. ' of entry ' .. id .. ' is not in the tag registry' end\n"
"    end\n"
"  end\n"
"end\n"
"return out\n";

static struct {
	const char *body;
	size_t len;
	char sha[41];
} scripts[TCR_LUA_COUNT];

void tcr_lua_init(void)
{
	static int done;
	static const char *const bodies[TCR_LUA_COUNT] = {
		lua_save, lua_remove, lua_clean, lua_ids, lua_touch, lua_meta, lua_loadv, lua_gctags, lua_verify
	};
	int i;

	if (done) {
		return;
	}
	for (i = 0; i < TCR_LUA_COUNT; i++) {
		scripts[i].body = bodies[i];
		scripts[i].len = strlen(bodies[i]);
		sha1_hex(bodies[i], scripts[i].len, scripts[i].sha);
	}
	done = 1;
}

#define EVAL_ARGS_MAX (TC_TAGS_MAX + 16)

/* EVALSHA script on the shard's node; NOSCRIPT (a restarted or flushed
 * server) loads it and runs it again. argv: nkeys keys, then the args. */
redisReply *tcr_eval(tcr_state *st, int shard, int script, int read, int nkeys, int argc,
                     const char **argv, const size_t *lens)
{
	const char **av;
	size_t *al;
	char nk[16];
	redisReply *r;
	int attempt;

	if (argc + 3 > EVAL_ARGS_MAX) {
		tcr_fail(st, "too many script arguments");
		return NULL;
	}
	av = malloc(sizeof(*av) * (size_t)(argc + 3));
	al = malloc(sizeof(*al) * (size_t)(argc + 3));
	if (!av || !al) {
		free(av);
		free(al);
		tcr_fail(st, "out of memory");
		return NULL;
	}
	snprintf(nk, sizeof(nk), "%d", nkeys);
	av[0] = "EVALSHA";
	al[0] = 7;
	av[1] = scripts[script].sha;
	al[1] = 40;
	av[2] = nk;
	al[2] = strlen(nk);
	memcpy(av + 3, argv, sizeof(*av) * (size_t)argc);
	memcpy(al + 3, lens, sizeof(*al) * (size_t)argc);
	r = NULL;
	for (attempt = 0; attempt < 2; attempt++) {
		r = tcr_shard_cmd(st, shard, read, argc + 3, av, al);
		if (!r || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOSCRIPT", 8) != 0 || attempt > 0) {
			break;
		}
		tcr_reply_free(r);
		r = NULL;
		st->noscript++;
		{
			const char *lv[3] = {"SCRIPT", "LOAD", scripts[script].body};
			size_t ll[3] = {6, 4, scripts[script].len};
			redisReply *lr = tcr_shard_cmd(st, shard, read, 3, lv, ll);

			if (!lr) {
				break;
			}
			if (lr->type != REDIS_REPLY_STRING) {
				tcr_reply_err(st, NULL, lr, "SCRIPT LOAD");
				tcr_reply_free(lr);
				break;
			}
			tcr_reply_free(lr);
		}
	}
	free(av);
	free(al);
	return r;
}
