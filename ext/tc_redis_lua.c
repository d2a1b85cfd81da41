/*
 * tc_redis_lua.c: the Lua scripts behind every write and every tag query,
 * and EVALSHA with a reload on NOSCRIPT.
 *
 * Every script works inside one shard: all the keys it touches share the
 * shard's hash tag (one cluster slot), so each script is atomic, and on a
 * cluster it runs on the node that owns the slot. H (the shard's key
 * prefix, "<prefix>{<hashtag>}") comes in ARGV[1].
 *
 *   H.."e:"..id    STRING  the entry record (tc_redis_cmd.c)
 *   H.."i"         ZSET    every id, scored by its save's score
 *   H.."t:"..tag   ZSET    the links of a tag: id -> the score it was saved with
 *   H.."T"         ZSET    every tag, scored by (about) its longest expire
 *   H.."x:"..n     ZSET    working sets of cleans and listings (600 s TTL)
 *
 * Versioned links. A save's score is expire * 65536 + a random 16-bit
 * version: an integer below 2^53, exact in a double, and kept as an integer
 * by Redis (a fractional score in a small sorted set is a string that every
 * ZADD parses again: 9x slower). It is stored in the record, the id index
 * and every tag link. Every entry is in the id index with its score; a
 * link is valid only when its score is the id's score in the index.
 * Cleans and listings keep only valid links (ZINTERSTORE tag, index
 * WEIGHTS 1 -1 = 0). A clean deletes its entries and leaves their links in
 * other tags behind; a save of the id with a new score makes them stale.
 * Stale links go when their score expires (every link of a finite entry
 * does), and the links of dropped forever entries are removed at once. A
 * save or a remove unlinks an entry's former tags eagerly (rare, and it
 * keeps a re-saved id from being listed under a tag it lost). A clean by
 * tags that fits in one call also leaves its finite ids in the id index
 * (their ZREM was a third of its server time): until the id is saved
 * again or removed, or its score expires, such a *dead* id keeps valid
 * links, so listings drop the ids whose record is gone (alive()), and a
 * later clean deletes its absent record once more, harmlessly.
 *
 * Index keys (t:, i, T) expire with their longest-lived member: a key's
 * TTL is kept at least max(expire - now, 0) + grace + 5 (plus a slack of
 * 1/16 of the lifetime, at most 60 s, so that it is not rewritten on every
 * save), and a key holding a forever member has none. When every entry of
 * a tag has expired, its metadata expires too, clean('old') or not. Links
 * whose score is older than now - grace - 1 are trimmed whenever a save
 * refreshes the key's TTL, and by clean('old').
 *
 * The registry holds each index key's TTL deadline, and a save that finds
 * a deadline at or past its own score does not touch the key's TTL. So the
 * deadline must never be above what the TTL covers: whenever a key's TTL
 * is lowered (settle(): the key lost its newest member, or a persistent key
 * that no longer holds a forever member gets a TTL again), its deadline in
 * the registry goes down with it. (A deadline of "never" left on a key
 * that clean('old') gave a TTL let later saves outlive their id index.)
 *
 * Keys: every key a script knows before it runs is declared in KEYS (so a
 * cluster node can answer MOVED, ASK or TRYAGAIN before anything runs);
 * the tags an entry had before are read from its record and not declared.
 *
 * Order: a script can stop half-way (a slot migrating under it on a
 * cluster, where an undeclared key may be refused). Scripts write an
 * entry's links before the entry and the entry before they remove links it
 * no longer has, and remove an entry before its links: stopped anywhere,
 * they leave at most a stale link, never an entry a clean cannot reach.
 *
 * Memory: Redis refuses only a script's first write when it is over
 * maxmemory. A save's first write is a ZADD (refused: save() is false); a
 * clean's and a listing's first write is a DEL, so they run when Redis is
 * full (invalidation must never be refused).
 *
 * Time: scripts get "now" from the client (the same clock that computed
 * the expiries) and only ever set relative TTLs (EXPIRE, SET EX), so the
 * server's clock does not matter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tc_redis.h"
#include "tc_util.h"

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

/*
 * The helpers every script but meta and loadv starts with (tcr_lua_init
 * puts them in front of the script's body): the record header (hdr), TTLs
 * of entries (xttl, from the real expire) and of index keys (ttl_for,
 * ittl, slack, from a score), a score's expiry bucket, adding and
 * unlinking a member with the key's TTL kept right (add, settle, unlink),
 * the valid links of a tag (valid), the ids of a page whose entry exists
 * and has not expired inside its bucket (alive), and the removal of
 * entries (drop).
 */
static const char lua_prelude[] =
"local S = 65536\n"
"local NEVER = 9999999999 * S\n"
"local function sec(s)\n"
"  return math.floor(s / S)\n"
"end\n"
"local function n2s(x)\n"
"  return string.format('%d', x)\n"
"end\n"
"local HDR = 34\n"
"local function hdr(k, h)\n"
"  h = h or redis.call('GETRANGE', k, 0, 1023)\n"
"  if #h < HDR or string.byte(h, 1) ~= 2 then return nil end\n"
"  local e = struct.unpack('<d', h, 3)\n"
"  local m = struct.unpack('<d', h, 11)\n"
"  local tl = struct.unpack('<I4', h, 19)\n"
"  local x = struct.unpack('<d', h, 27)\n"
"  local tb = ''\n"
"  if tl > 0 then\n"
"    if HDR + tl <= #h then tb = string.sub(h, HDR + 1, HDR + tl)\n"
"    else tb = redis.call('GETRANGE', k, HDR, HDR - 1 + tl) end\n"
"  end\n"
"  local tags, p, n = {}, 1, #tb\n"
"  while p + 1 <= n do\n"
"    local l = struct.unpack('<I2', tb, p)\n"
"    tags[#tags + 1] = string.sub(tb, p + 2, p + 1 + l)\n"
"    p = p + 2 + l\n"
"  end\n"
"  return e, m, tags, x\n"
"end\n"
"local function ttl_for(s, now, grace)\n"
"  local t = math.max(sec(s) - now, 0) + grace\n"
"  if t < 1 then t = 1 end\n"
"  return t\n"
"end\n"
"local function xttl(x, now, grace)\n"
"  local t = math.max(x - now, 0) + grace\n"
"  if t < 1 then t = 1 end\n"
"  return t\n"
"end\n"
"local function bucket(x, now)\n"
"  if x >= 9999999999 then return x end\n"
"  local g = math.max(1, math.min(BMAX, math.floor(math.max(x - now, 0) / BDIV)))\n"
"  return math.ceil(x / g) * g\n"
"end\n"
"local function ittl(s, now, grace)\n"
"  return ttl_for(s, now, grace) + 5\n"
"end\n"
"local function slack(s, now)\n"
"  return math.min(BMAX, math.floor(math.max(sec(s) - now, 0) / BDIV))\n"
"end\n"
"local function settle(k, now, grace, rk, name)\n"
"  local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')\n"
"  if #top == 0 then return nil end\n"
"  local ts = tonumber(top[2])\n"
"  if ts >= NEVER then redis.call('PERSIST', k) else redis.call('EXPIRE', k, n2s(ittl(ts, now, grace))) end\n"
"  if rk then\n"
"    local rs = redis.call('ZSCORE', rk, name)\n"
"    if rs and tonumber(rs) > ts then\n"
"      redis.call('ZADD', rk, n2s(ts), name)\n"
"      settle(rk, now, grace)\n"
"    end\n"
"  end\n"
"  return ts\n"
"end\n"
"local function add(k, mb, s, now, grace, rk, name)\n"
"  local ttl = redis.call('TTL', k)\n"
"  redis.call('ZADD', k, n2s(s), mb)\n"
"  if s >= NEVER then\n"
"    if ttl >= 0 then redis.call('PERSIST', k) end\n"
"    return false\n"
"  end\n"
"  if ttl == -1 then\n"
"    settle(k, now, grace, rk, name)\n"
"    return true\n"
"  end\n"
"  local need = ittl(s, now, grace)\n"
"  if ttl == -2 or ttl < need then\n"
"    redis.call('EXPIRE', k, n2s(need + slack(s, now)))\n"
"    return true\n"
"  end\n"
"  return false\n"
"end\n"
"local function unlink(k, mb, rk, name, now, grace)\n"
"  local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')\n"
"  if #top == 0 or redis.call('ZREM', k, mb) == 0 or top[1] ~= mb then return end\n"
"  local s = top[2]\n"
"  top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')\n"
"  if #top == 0 then\n"
"    if rk then unlink(rk, name, nil, nil, now, grace) end\n"
"  elseif tonumber(s) > tonumber(top[2]) then\n"
"    settle(k, now, grace, rk, name)\n"
"  end\n"
"end\n"
"local function valid(tk, ik, dst)\n"
"  redis.call('ZINTERSTORE', dst, 2, tk, ik, 'WEIGHTS', 1, -1)\n"
"  redis.call('ZREMRANGEBYSCORE', dst, '(0', '+inf')\n"
"  redis.call('ZREMRANGEBYSCORE', dst, '-inf', '(0')\n"
"end\n"
"local function alive(H, key, page, off, now)\n"
"  local k = redis.call('ZCOUNT', key, n2s(now * S), '(' .. n2s((now + 61) * S))\n"
"  local out = {}\n"
"  for i, id in ipairs(page) do\n"
"    local keep\n"
"    if off + i <= k then\n"
"      local xs = redis.call('GETRANGE', H .. 'e:' .. id, 26, 33)\n"
"      keep = #xs == 8 and struct.unpack('<d', xs, 1) >= now\n"
"    else\n"
"      keep = redis.call('EXISTS', H .. 'e:' .. id) == 1\n"
"    end\n"
"    if keep then out[#out + 1] = id end\n"
"  end\n"
"  return out\n"
"end\n"
"local function drop(H, ik, ids, now, grace, dead)\n"
"  if #ids == 0 then return 0 end\n"
"  local keys, forever, gone = {}, {}, ids\n"
"  local sc = {}\n"
"  if dead then gone = {} end\n"
"  if redis.call('ZCOUNT', ik, n2s(NEVER), '+inf') > 0 then sc = redis.call('ZMSCORE', ik, unpack(ids)) end\n"
"  for i = 1, #ids do\n"
"    keys[i] = H .. 'e:' .. ids[i]\n"
"    if sc[i] and tonumber(sc[i]) >= NEVER then\n"
"      local e, m, tags = hdr(keys[i])\n"
"      if tags then forever[#forever + 1] = {ids[i], tags} end\n"
"      if dead then gone[#gone + 1] = ids[i] end\n"
"    end\n"
"  end\n"
"  local n = redis.call('DEL', unpack(keys))\n"
"  if #gone > 0 then\n"
"    redis.call('ZREM', ik, unpack(gone))\n"
"    if redis.call('EXISTS', ik) == 0 then redis.call('ZREM', H .. 'T', '') end\n"
"  end\n"
"  for _, f in ipairs(forever) do\n"
"    for _, t in ipairs(f[2]) do unlink(H .. 't:' .. t, f[1], H .. 'T', t, now, grace) end\n"
"  end\n"
"  return n\n"
"end\n";

/*
 * Save, first part (before the helpers): a save of an entry that exists
 * with the same tags and the same expiry bucket (ARGV[7] = 1: the server
 * does not evict keys) rewrites the record and keeps its score, since the
 * entry's links and index member already carry it, and their keys' TTLs
 * already cover it: GETRANGE, SET (and SETRANGE of the score).
 */
static const char lua_save_head[] =
"local h0\n"
"if ARGV[7] == '1' then\n"
"  local rec, s, now = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])\n"
"  local tl = struct.unpack('<I4', rec, 19)\n"
"  h0 = redis.call('GETRANGE', KEYS[1], 0, 33 + tl)\n"
"  local h = h0\n"
"  if #h == 34 + tl and string.byte(h, 1) == 2 and string.sub(h, 19, 22) == string.sub(rec, 19, 22)\n"
"      and string.sub(h, 35) == string.sub(rec, 35, 34 + tl) then\n"
"    local os = struct.unpack('<d', h, 3)\n"
"    local b = math.floor(os / 65536)\n"
"    if b == math.floor(s / 65536) and b >= now then\n"
"      local x = struct.unpack('<d', rec, 27)\n"
"      if x >= 9999999999 then\n"
"        redis.call('SET', KEYS[1], rec)\n"
"      else\n"
"        redis.call('SET', KEYS[1], rec, 'EX', string.format('%d', math.max(1, math.max(x - now, 0) + tonumber(ARGV[6]))))\n"
"      end\n"
"      if os ~= s then redis.call('SETRANGE', KEYS[1], 2, struct.pack('<d', os)) end\n"
"      return 1\n"
"    end\n"
"  end\n"
"end\n";

/*
 * KEYS: entry, id index, registry, the tags' keys;
 * ARGV: H, id, record, score, now, grace, fast, tags...
 * Links first, then the entry, then the links of tags it no longer has.
 * Each index key's own PTTL (read before its ZADD, so the ZADD stays the
 * first write) tells whether it covers the new score: a key's TTL and the
 * entry's TTL are then both relative to this script's "now", whatever the
 * client's clock. The keys pushed get their registry deadlines (the id
 * index under the name '', which no tag can have) raised with them, in one
 * ZADD GT at the end; the registry is never read by a save. (It was, with one ZMSCORE: Redis formats every
 * double of its reply with %.17g, then Lua parses each back: 40,000
 * instructions of a 330,000-instruction save.) The score goes to ZADD as
 * the client's string (ARGV[4]): a Lua number would be formatted again
 * for every link.
 */
static const char lua_save[] =
"local H, id, rec, ss = ARGV[1], ARGV[2], ARGV[3], ARGV[4]\n"
"local s, now, grace = tonumber(ss), tonumber(ARGV[5]), tonumber(ARGV[6])\n"
"local ek, ik, rk = KEYS[1], KEYS[2], KEYS[3]\n"
"local oe, om, old = hdr(ek, h0)\n"
"local n = #ARGV - 7\n"

"local rsc = s\n"
"if s < NEVER then\n"
"  local g = math.max(1, slack(s, now))\n"
"  rsc = math.ceil(s / (g * S)) * g * S\n"
"end\n"
"local pushed, rsz = {}, n2s(rsc)\n"
"local function link(k, name)\n"
"  local pt = redis.call('PTTL', k)\n"
"  redis.call('ZADD', k, ss, id)\n"
"  if pt == -1 then return end\n"
"  if s >= NEVER then\n"
"    if pt >= 0 then redis.call('PERSIST', k) end\n"
"  else\n"
"    if pt >= 1000 * ittl(s, now, grace) then return end\n"
"    redis.call('EXPIRE', k, n2s(ittl(rsc, now, grace)))\n"
"    if pt >= 0 then redis.call('ZREMRANGEBYSCORE', k, '-inf', '(' .. n2s((now - grace - 1) * S)) end\n"
"  end\n"
"  pushed[#pushed + 1] = rsz\n"
"  pushed[#pushed + 1] = name\n"
"end\n"
"link(ik, '')\n"
"for i = 1, n do link(KEYS[3 + i], ARGV[7 + i]) end\n"
"if #pushed > 0 then\n"
"  local rt = redis.call('TTL', rk)\n"
"  for i = 1, #pushed, 2000 do redis.call('ZADD', rk, 'GT', unpack(pushed, i, math.min(i + 1999, #pushed))) end\n"
"  if s >= NEVER then\n"
"    if rt >= 0 then redis.call('PERSIST', rk) end\n"
"  elseif rt == -1 then\n"
"    settle(rk, now, grace)\n"
"  else\n"
"    local need = ittl(rsc, now, grace)\n"
"    if rt == -2 or rt < need then redis.call('EXPIRE', rk, n2s(need + slack(rsc, now))) end\n"
"  end\n"
"end\n"
"if s >= NEVER then\n"
"  redis.call('SET', ek, rec)\n"
"else\n"
"  redis.call('SET', ek, rec, 'EX', n2s(xttl(struct.unpack('<d', rec, 27), now, grace)))\n"
"end\n"
"if old then\n"
"  local keep = {}\n"
"  for i = 8, #ARGV do keep[ARGV[i]] = true end\n"
"  for _, t in ipairs(old) do\n"
"    if not keep[t] then unlink(H .. 't:' .. t, id, rk, t, now, grace) end\n"
"  end\n"
"end\n"
"return 1\n";

/* KEYS: entry, id index, registry; ARGV: H, id, now, grace */
static const char lua_remove[] =
"local H, id, now, grace = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])\n"
"local e, m, tags = hdr(KEYS[1])\n"
"local n = redis.call('DEL', KEYS[1])\n"
"unlink(KEYS[2], id, KEYS[3], '', now, grace)\n"
"if tags then\n"
"  for _, t in ipairs(tags) do unlink(H .. 't:' .. t, id, KEYS[3], t, now, grace) end\n"
"end\n"
"return n\n";

/*
 * KEYS: id index, registry, working set, second working set, the tags' keys;
 * ARGV: H, mode, now, grace, chunk, phase, tags...
 * mode: any | all | not (the ids validly linked to the tags, gathered in the
 * working set on phase 0), old, flush. Drops at most chunk entries; returns
 * what is left to do (0: done). A clean of one tag with fewer than chunk
 * entries is one call, and its tag key is unlinked whole. A clean by tags
 * (any, all) done in one call leaves its finite ids in the id index as
 * dead ids (see the top of this file); a clean of several calls removes
 * them, since its last call tells that a tag key is empty by its valid
 * links, and so does 'not' (its ids come from the index itself).
 */
static const char lua_clean[] =
"local H, mode = ARGV[1], ARGV[2]\n"
"local now, grace, chunk, phase = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]\n"
"local ik, rk, tmp, tmp2 = KEYS[1], KEYS[2], KEYS[3], KEYS[4]\n"
"if mode == 'old' then\n"
"  local ids = redis.call('ZRANGEBYSCORE', ik, '-inf', '(' .. n2s(now * S), 'LIMIT', 0, chunk)\n"
"  if #ids < chunk then\n"
"    local w = redis.call('ZRANGEBYSCORE', ik, n2s(now * S), '(' .. n2s((now + 61) * S), 'LIMIT', 0, chunk - #ids)\n"
"    for _, id in ipairs(w) do\n"
"      local xs = redis.call('GETRANGE', H .. 'e:' .. id, 26, 33)\n"
"      if #xs < 8 or struct.unpack('<d', xs, 1) < now then ids[#ids + 1] = id end\n"
"    end\n"
"  end\n"
"  drop(H, ik, ids, now, grace)\n"
"  return #ids\n"
"end\n"
"if mode == 'flush' then\n"
"  local ids = redis.call('ZRANGE', ik, 0, chunk - 1)\n"
"  if #ids > 0 then\n"
"    drop(H, ik, ids, now, grace)\n"
"    return #ids\n"
"  end\n"
"  local tags = redis.call('ZRANGE', rk, 0, chunk - 1)\n"
"  if #tags == 0 then return 0 end\n"
"  local keys = {}\n"
"  for i = 1, #tags do keys[i] = H .. 't:' .. tags[i] end\n"
"  redis.call('UNLINK', unpack(keys))\n"
"  redis.call('ZREM', rk, unpack(tags))\n"
"  return #tags\n"
"end\n"
"local n = #KEYS - 4\n"
"if phase == '0' then\n"
"  redis.call('DEL', tmp)\n"
"  if n == 1 and mode ~= 'not' then\n"
"    local tk = KEYS[5]\n"
"    if redis.call('ZCARD', tk) < chunk then\n"
"      redis.call('ZINTERSTORE', tmp, 2, tk, ik, 'WEIGHTS', 1, -1)\n"
"      local ids = redis.call('ZRANGEBYSCORE', tmp, 0, 0)\n"
"      redis.call('DEL', tmp)\n"
"      drop(H, ik, ids, now, grace, true)\n"
"      redis.call('UNLINK', tk)\n"
"      redis.call('ZREM', rk, ARGV[7])\n"
"      return 0\n"
"    end\n"
"    valid(tk, ik, tmp)\n"
"  elseif mode == 'all' then\n"
"    valid(KEYS[5], ik, tmp)\n"
"    for i = 2, n do\n"
"      valid(KEYS[4 + i], ik, tmp2)\n"
"      redis.call('ZINTERSTORE', tmp, 2, tmp, tmp2)\n"
"    end\n"
"  else\n"
"    for i = 1, n do\n"
"      valid(KEYS[4 + i], ik, tmp2)\n"
"      redis.call('ZUNIONSTORE', tmp, 2, tmp, tmp2)\n"
"    end\n"
"    if mode == 'not' then redis.call('ZDIFFSTORE', tmp, 2, ik, tmp) end\n"
"  end\n"
"  redis.call('DEL', tmp2)\n"
"  redis.call('EXPIRE', tmp, 600)\n"
"end\n"
"local ids = redis.call('ZRANGE', tmp, 0, chunk - 1)\n"
"drop(H, ik, ids, now, grace, phase == '0' and mode ~= 'not' and #ids < chunk)\n"
"if #ids > 0 then redis.call('ZREMRANGEBYRANK', tmp, 0, #ids - 1) end\n"
"local left = redis.call('ZCARD', tmp)\n"
"if left == 0 and mode == 'any' then\n"
"  for i = 1, n do\n"
"    local tk = KEYS[4 + i]\n"
"    local gone = phase == '0'\n"
"    if not gone then\n"
"      valid(tk, ik, tmp2)\n"
"      gone = redis.call('ZCARD', tmp2) == 0\n"
"      redis.call('DEL', tmp2)\n"
"    end\n"
"    if gone then\n"
"      redis.call('UNLINK', tk)\n"
"      redis.call('ZREM', rk, ARGV[6 + i])\n"
"    end\n"
"  end\n"
"end\n"
"return left\n";

/*
 * KEYS: id index, working set, second working set, the tags' keys;
 * ARGV: H, mode, now, offset, count, tags... One page of live ids; the working
 * set of the tag modes is made on the first page and dropped after the last.
 */
static const char lua_ids[] =
"local mode, now, off, cnt = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])\n"
"local ik, tmp, tmp2 = KEYS[1], KEYS[2], KEYS[3]\n"
"local H = ARGV[1]\n"
"local function out(key, page)\n"
"  local raw = #page\n"
"  page = alive(H, key, page, off, now)\n"
"  page[#page + 1] = raw\n"
"  return page\n"
"end\n"
"if mode == 'all' then\n"
"  return out(ik, redis.call('ZRANGEBYSCORE', ik, n2s(now * S), '+inf', 'LIMIT', off, cnt))\n"
"end\n"
"local n = #KEYS - 3\n"
"if off == 0 then\n"
"  redis.call('DEL', tmp)\n"
"  if mode == 'all_of' then\n"
"    valid(KEYS[4], ik, tmp)\n"
"    for i = 2, n do\n"
"      valid(KEYS[3 + i], ik, tmp2)\n"
"      redis.call('ZINTERSTORE', tmp, 2, tmp, tmp2)\n"
"    end\n"
"  else\n"
"    for i = 1, n do\n"
"      valid(KEYS[3 + i], ik, tmp2)\n"
"      redis.call('ZUNIONSTORE', tmp, 2, tmp, tmp2)\n"
"    end\n"
"  end\n"
"  redis.call('DEL', tmp2)\n"
"  if mode == 'not' then\n"
"    redis.call('ZDIFFSTORE', tmp, 2, ik, tmp)\n"
"  else\n"
"    redis.call('ZINTERSTORE', tmp, 2, tmp, ik, 'WEIGHTS', 0, 1)\n"
"  end\n"
"  redis.call('EXPIRE', tmp, 600)\n"
"end\n"
"local page = redis.call('ZRANGEBYSCORE', tmp, n2s(now * S), '+inf', 'LIMIT', off, cnt)\n"
"local res = out(tmp, page)\n"
"if #page < cnt then redis.call('DEL', tmp) end\n"
"return res\n";

/*
 * KEYS: entry, id index, registry; ARGV: H, id, extra, now, grace,
 * force_expired. The score keeps its version. A later expiry goes to the
 * links before the record, an earlier one after it.
 */
static const char lua_touch[] =
"local H, id = ARGV[1], ARGV[2]\n"
"local extra, now, grace, force = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'\n"
"local ek, ik, rk = KEYS[1], KEYS[2], KEYS[3]\n"
"local e, m, tags, x = hdr(ek)\n"
"if not e then return 0 end\n"
"local v = e % S\n"
"local nx\n"
"if force then\n"
"  nx = now - 1\n"
"else\n"
"  if x < now then return 0 end\n"
"  if e >= NEVER then return 1 end\n"
"  nx = x + extra\n"
"  if nx < now - 1 then nx = now - 1 end\n"
"  redis.call('SETRANGE', ek, 10, struct.pack('<d', now))\n"
"end\n"
"local ne = bucket(nx, now) * S + v\n"
"local function record()\n"
"  redis.call('SETRANGE', ek, 2, struct.pack('<d', ne))\n"
"  redis.call('SETRANGE', ek, 26, struct.pack('<d', nx))\n"
"  redis.call('EXPIRE', ek, n2s(xttl(nx, now, grace)))\n"
"end\n"
"if ne < e then record() end\n"
"local rne = ne\n"
"if ne < NEVER then rne = ne + slack(ne, now) * S end\n"
"add(ik, id, ne, now, grace, rk, '')\n"
"local ci = redis.call('ZSCORE', rk, '')\n"
"if not ci or tonumber(ci) < rne then add(rk, '', rne, now, grace) end\n"
"for _, t in ipairs(tags) do\n"
"  add(H .. 't:' .. t, id, ne, now, grace, rk, t)\n"
"  local cur = redis.call('ZSCORE', rk, t)\n"
"  if not cur or tonumber(cur) < rne then add(rk, t, rne, now, grace) end\n"
"end\n"
"if ne >= e then record() end\n"
"return 1\n";

/* KEYS: entry. Its header and tags, without the value. */
static const char lua_meta[] =
"local h = redis.call('GETRANGE', KEYS[1], 0, 33)\n"
"if #h < 34 then return false end\n"
"if string.byte(h, 1) ~= 2 then return h end\n"
"local tl = struct.unpack('<I4', h, 19)\n"
"if tl == 0 then return h end\n"
"return h .. redis.call('GETRANGE', KEYS[1], 34, 33 + tl)\n";

/*
 * KEYS: entry, id index; ARGV: H, id, now, grace, read_only.
 * A load that also checks the entry's links: under an eviction policy Redis
 * may evict a tag's key (which a later save may create again without this
 * entry), and an entry a clean by that tag could not reach must not be
 * served. A link is checked by its score (the save's version), not by the
 * key's existence. Such an entry is a miss, and removed on a master.
 */
static const char lua_loadv[] =
"local v = redis.call('GET', KEYS[1])\n"
"if not v then return false end\n"
"if #v < 34 or string.byte(v, 1) ~= 2 then return v end\n"
"local H, id, now = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
"if struct.unpack('<d', v, 27) < now then return v end\n"
"local e = struct.unpack('<d', v, 3)\n"
"local tl = struct.unpack('<I4', v, 19)\n"
"local ok = tonumber(redis.call('ZSCORE', KEYS[2], id) or -1) == e\n"
"local p, stop = 35, 34 + tl\n"
"while ok and p + 1 <= stop do\n"
"  local l = struct.unpack('<I2', v, p)\n"
"  ok = tonumber(redis.call('ZSCORE', H .. 't:' .. string.sub(v, p + 2, p + 1 + l), id) or -1) == e\n"
"  p = p + 2 + l\n"
"end\n"
"if ok then return v end\n"
"if ARGV[5] ~= '1' then\n"
"  redis.call('DEL', KEYS[1])\n"
"  redis.call('ZREM', KEYS[2], id)\n"
"  if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('ZREM', H .. 'T', '') end\n"
"end\n"
"return false\n";

/*
 * KEYS: registry, id index; ARGV: H, now, grace, offset, count.
 * clean('old'), second pass: links of expired entries leave every tag,
 * tags left empty leave the registry. Returns {tags seen, tags kept}.
 */
static const char lua_gctags[] =
"local H, now, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
"local off, cnt = tonumber(ARGV[4]), tonumber(ARGV[5])\n"
"local rk, ik = KEYS[1], KEYS[2]\n"
"local names = redis.call('ZRANGE', rk, off, off + cnt - 1)\n"
"local kept = 0\n"
"-- settle() may lower a name's score, which moves it to a lower rank: a name\n"
"-- of a later page can then be skipped by this pass (its links go with its\n"
"-- key's TTL, or at the next clean('old'))\n"
"for _, t in ipairs(names) do\n"
"  local tk = ik\n"
"  if t ~= '' then\n"
"    tk = H .. 't:' .. t\n"
"    redis.call('ZREMRANGEBYSCORE', tk, '-inf', '(' .. n2s(now * S))\n"
"  end\n"
"  if redis.call('TTL', tk) == -1 then settle(tk, now, grace, rk, t) end\n"
"  if redis.call('EXISTS', tk) == 0 then redis.call('ZREM', rk, t) else kept = kept + 1 end\n"
"end\n"
"return {#names, kept}\n";

/*
 * KEYS: registry, id index, working set; ARGV: now, offset, count, H.
 * One page of the registry: {names read, the names with a valid link to
 * an entry that exists (not to a dead id)}.
 */
static const char lua_tags[] =
"local rk, ik, tmp = KEYS[1], KEYS[2], KEYS[3]\n"
"local now, H = tonumber(ARGV[1]), ARGV[4]\n"
"local names = redis.call('ZRANGEBYSCORE', rk, n2s(now * S), '+inf', 'LIMIT', ARGV[2], ARGV[3])\n"
"local out = {}\n"
"for _, t in ipairs(names) do\n"
"  if t ~= '' then\n"
"    local tk = H .. 't:' .. t\n"
"    local top = redis.call('ZRANGE', tk, -8, -1, 'WITHSCORES')\n"
"    local live = false\n"
"    for j = 1, #top, 2 do\n"
"      local s = redis.call('ZSCORE', ik, top[j])\n"
"      if s and tonumber(s) == tonumber(top[j + 1]) and redis.call('EXISTS', H .. 'e:' .. top[j]) == 1 then\n"
"        live = true\n"
"        break\n"
"      end\n"
"    end\n"
"    if not live and #top == 16 then\n"
"      valid(tk, ik, tmp)\n"
"      local at = 0\n"
"      while not live do\n"
"        local ids = redis.call('ZRANGE', tmp, at, at + 99)\n"
"        if #ids == 0 then break end\n"
"        for _, id in ipairs(ids) do\n"
"          if redis.call('EXISTS', H .. 'e:' .. id) == 1 then live = true break end\n"
"        end\n"
"        at = at + 100\n"
"      end\n"
"      redis.call('DEL', tmp)\n"
"    end\n"
"    if live then out[#out + 1] = t end\n"
"  end\n"
"end\n"
"return {#names, out}\n";

/*
 * KEYS: id index, registry; ARGV: H, now, grace, ids... (entries found
 * by SCAN). One string per problem: an entry live (or expired less than
 * grace ago) without a valid link, an index key that would expire first.
 */
static const char lua_verify[] =
"local H, now, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
"local ik, rk = KEYS[1], KEYS[2]\n"
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
"  elseif e >= (now - grace - 1) * S then\n"
"    local et = keyttl(ek)\n"
"    if (e >= NEVER) ~= (et == math.huge) then out[#out + 1] = 'entry ' .. id .. ': TTL does not match its expire' end\n"
"    local si = redis.call('ZSCORE', ik, id)\n"
"    if not si then out[#out + 1] = 'entry ' .. id .. ': not in the id index'\n"
"    elseif tonumber(si) ~= e then out[#out + 1] = 'entry ' .. id .. ': id index score ' .. si .. ' is not its score ' .. n2s(e)\n"
"    elseif keyttl(ik) + 1000 < et then out[#out + 1] = 'entry ' .. id .. ': the id index expires before it' end\n"
"    for _, t in ipairs(tags) do\n"
"      local tk = H .. 't:' .. t\n"
"      local st = redis.call('ZSCORE', tk, id)\n"
"      if not st then out[#out + 1] = 'entry ' .. id .. ': no link in tag ' .. t\n"
"      elseif tonumber(st) ~= e then out[#out + 1] = 'entry ' .. id .. ': tag ' .. t .. ' score ' .. st .. ' is not its score ' .. n2s(e)\n"
"      elseif keyttl(tk) + 1000 < et then out[#out + 1] = 'entry ' .. id .. ': tag ' .. t .. ' expires before it' end\n"
"      if not redis.call('ZSCORE', rk, t) then out[#out + 1] = 'tag ' .. t .. ' of entry ' .. id .. ' is not in the tag registry' end\n"
"    end\n"
"  end\n"
"end\n"
"return out\n";

/*
 * TwoLevel's invalidation journal (tc_redis_journal.c): three keys on shard
 * 0, JK = {seq, log, epoch}, JA = {record, a new epoch id, records kept}.
 * The append keeps the three consistent: a missing epoch (a flush, an
 * eviction, a restart that lost it) makes a new one and empties the log.
 * The log is trimmed back to `kept` records once it holds kept/8 (at most
 * 64) more, not on every append: an LTRIM per append was a sixth of a
 * journaled save's server time. Readers only need the log to end at seq
 * and hold the records before it without holes (jread's gap test uses
 * its length), so a few more than `kept` change nothing.
 */
#define LUA_JOURNAL_APPEND \
"local je = redis.call('GET', JK[3])\n" \
"if not je then redis.call('SET', JK[3], JA[2]); redis.call('DEL', JK[2]) end\n" \
"local jseq = redis.call('INCR', JK[1])\n" \
"local jn = redis.call('RPUSH', JK[2], JA[1])\n" \
"local jkeep = tonumber(JA[3])\n" \
"if jn > jkeep + math.min(64, math.floor(jkeep / 8)) then redis.call('LTRIM', JK[2], jn - jkeep, -1) end\n"

/* KEYS: seq, log, epoch; ARGV: record, a new epoch id, records kept */
static const char lua_jappend[] =
"local JK, JA = KEYS, ARGV\n"
LUA_JOURNAL_APPEND
"return jseq\n";

/* KEYS: seq, log, epoch; ARGV: since, a new epoch id.
 * {epoch, head, gap, records} */
static const char lua_jread[] =
"local e = redis.call('GET', KEYS[3])\n"
"if not e then e = ARGV[2]; redis.call('SET', KEYS[3], e); redis.call('DEL', KEYS[2]) end\n"
"local h = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
"local since = tonumber(ARGV[1])\n"
"if since >= h then return {e, tostring(h), since > h and 1 or 0} end\n"
"local n = redis.call('LLEN', KEYS[2])\n"
"if since + 1 < h - n + 1 then return {e, tostring(h), 1} end\n"
"return {e, tostring(h), 0, redis.call('LRANGE', KEYS[2], n - (h - since), -1)}\n";

/*
 * The journaled variant of a write (save, remove, clean) when the store is
 * TwoLevel's slow level: the same script with the journal's three keys at
 * the end of KEYS and its three arguments at the end of ARGV. Those six
 * are taken off the ends of KEYS and ARGV in place (Redis makes both
 * tables afresh for every call, and scripts commonly table.remove() them),
 * the script's own text runs unchanged inside a function, then the record
 * is appended, in the same atomic step: a process killed after the write
 * cannot leave the other nodes unaware of it. A write that fails runs no
 * append (a script error stops it); a clean's first write is still its
 * DEL. (Copying KEYS and ARGV into new tables instead cost 2.7 us a call:
 * with the per-append LTRIM, most of what a journaled save cost the server
 * over a plain one.)
 */
static const char lua_jwrap_head[] =
"local JK, JA = {}, {}\n"
"do\n"
"  local nk, na = #KEYS, #ARGV\n"
"  for i = 1, 3 do JK[i] = KEYS[nk - 3 + i]; JA[i] = ARGV[na - 3 + i] end\n"
"  for i = 0, 2 do KEYS[nk - i] = nil; ARGV[na - i] = nil end\n"
"end\n"
"local jres = (function()\n";

static const char lua_jwrap_tail[] =
"\nend)()\n"
LUA_JOURNAL_APPEND
"return jres\n";

static struct {
	char *body;
	size_t len;
	char sha[41];
} scripts[TCR_LUA_COUNT];

/* A script: an optional head, the helpers (or not), the body. */
/* head, then the prelude behind the bucket rule's numbers (tcr_bucket()'s
 * TCR_BUCKET_DIV and TCR_BUCKET_MAX: the script's bucket() and slack()
 * take them from C, not from literals of their own), then the body. */
/* journaled: inside lua_jwrap_head and lua_jwrap_tail. */
static char *script_join(const char *head, int prelude, const char *body, int journaled)
{
	char consts[64];
	int cl = prelude ? snprintf(consts, sizeof(consts), "local BDIV, BMAX = %d, %d\n", TCR_BUCKET_DIV, TCR_BUCKET_MAX) : 0;
	size_t hl = head ? strlen(head) : 0, pl = prelude ? sizeof(lua_prelude) - 1 : 0, bl = strlen(body);
	size_t wh = journaled ? sizeof(lua_jwrap_head) - 1 : 0, wt = journaled ? sizeof(lua_jwrap_tail) - 1 : 0;
	char *s = malloc(wh + hl + (size_t)cl + pl + bl + wt + 1), *w = s;

	if (s) {
		memcpy(w, lua_jwrap_head, wh);
		w += wh;
		memcpy(w, head ? head : "", hl);
		w += hl;
		memcpy(w, consts, (size_t)cl);
		w += cl;
		memcpy(w, prelude ? lua_prelude : "", pl);
		w += pl;
		memcpy(w, body, bl);
		w += bl;
		memcpy(w, lua_jwrap_tail, wt);
		w[wt] = '\0';
	}
	return s;
}

int tcr_lua_init(void)
{
	static const struct {
		const char *head;
		int prelude;
		const char *body;
		int journaled;
	} parts[TCR_LUA_COUNT] = {
		[TCR_LUA_SAVE] = {lua_save_head, 1, lua_save, 0},
		[TCR_LUA_REMOVE] = {NULL, 1, lua_remove, 0},
		[TCR_LUA_CLEAN] = {NULL, 1, lua_clean, 0},
		[TCR_LUA_SAVE_J] = {lua_save_head, 1, lua_save, 1},
		[TCR_LUA_REMOVE_J] = {NULL, 1, lua_remove, 1},
		[TCR_LUA_CLEAN_J] = {NULL, 1, lua_clean, 1},
		[TCR_LUA_JAPPEND] = {NULL, 0, lua_jappend, 0},
		[TCR_LUA_JREAD] = {NULL, 0, lua_jread, 0},
		[TCR_LUA_IDS] = {NULL, 1, lua_ids},
		[TCR_LUA_TOUCH] = {NULL, 1, lua_touch},
		[TCR_LUA_META] = {NULL, 0, lua_meta},
		[TCR_LUA_LOADV] = {NULL, 0, lua_loadv},
		[TCR_LUA_GCTAGS] = {NULL, 1, lua_gctags},
		[TCR_LUA_TAGS] = {NULL, 1, lua_tags},
		[TCR_LUA_VERIFY] = {NULL, 1, lua_verify},
	};
	int i;

	for (i = 0; i < TCR_LUA_COUNT; i++) {
		if (!scripts[i].body) {
			scripts[i].body = script_join(parts[i].head, parts[i].prelude, parts[i].body, parts[i].journaled);
			if (!scripts[i].body) {
				return -1;
			}
			scripts[i].len = strlen(scripts[i].body);
			sha1_hex(scripts[i].body, scripts[i].len, scripts[i].sha);
		}
	}
	return 0;
}

void tcr_lua_shutdown(void)
{
	int i;

	for (i = 0; i < TCR_LUA_COUNT; i++) {
		free(scripts[i].body);
		scripts[i].body = NULL;
	}
}

/* The most arguments a script call takes: a save or a clean of TC_TAGS_MAX
 * tags sends each tag twice (its key in KEYS, its name in ARGV) plus a few
 * fixed ones, and TwoLevel's journal 6 more. Redis has no argument limit of
 * its own for an authenticated client; the scripts unpack() at most one
 * list of tags (under Lua's 8000 C stack slots; the journaled variants copy
 * KEYS and ARGV with loops). */
#define EVAL_ARGS_MAX (2 * TC_TAGS_MAX + 24)

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
	tc_dec64(nk, nkeys);
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
