/*
 * tc_redis_lua.c: the Lua scripts behind every write and every tag query,
 * and EVALSHA with a reload on NOSCRIPT.
 *
 * Every script works inside one shard: all the keys it touches share the
 * shard's hash tag (one cluster slot), so each script is atomic, and on a
 * cluster it runs on the node that owns the slot. H (the shard's key
 * prefix, "<prefix>{<hashtag>}") comes in ARGV[1] of most scripts.
 *
 * Layout 3 (TECHNOTES.md, Redis, "Key layout" and "Versioned links"):
 *
 *   H.."e:"..id    STRING  the entry record (tc_redis_cmd.c), format 3
 *   H.."I"         HASH    id -> version (8 bytes) .. expire (f64): finite entries
 *   H.."s:"..tag   SET     the tag's links, version .. id, of finite entries
 *   H.."G"         SET     the tags with an s: key
 *   H.."J", "f:", "F"      the same for forever entries: never given a TTL
 *   H.."x:"..n     SET     working set of a chunked clean (600 s TTL)
 *
 * A link counts only while its version is the id's version in the id
 * index (valid()); the version is a hash of the save's tag list, so a save
 * writes blindly (tc_redis.c, save_multi(): MULTI/EXEC, no script) and the
 * links of tags an id lost, or of entries a clean dropped, stay behind,
 * invalid, until clean('old') sweeps them (gctags) or their key expires.
 *
 * TTLs of the keys of finite entries only grow (EXPIRE NX, then GT: push()),
 * and such a key is never deleted before its TTL by a clean: reset() empties
 * it but keeps its anchor ('' member, or field of I) and its TTL (at most
 * TRUST), so that a process that gave it a TTL may skip the EXPIRE of later
 * saves (tc_redis.c, ttltab). clean('all') too keeps them (the tag keys
 * reset, I with its token field, G with its names); only a key deleted by
 * hand (DEL, FLUSHDB) is made again, which the id index's token (its ''
 * field) tells each process.
 *
 * Keys: every key a script knows before it runs is declared in KEYS (so a
 * cluster node can answer MOVED, ASK or TRYAGAIN before anything runs); the
 * forever keys and the tags an entry had are built from H (same slot).
 *
 * Order: links are written before the index, the index before the entry,
 * and an entry is removed before its links.
 *
 * Memory: a clean's and a listing's first write is a DEL, so they run when
 * Redis is full (invalidation must never be refused).
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

/*
 * The helpers every script but meta and loadv starts with (tcr_lua_init
 * puts them in front of the script's body): the record header (hdr: the
 * link version, mtime, tags, expire), TTLs of entries (xttl) and of index
 * keys (kttl), raising a key's TTL (push: EXPIRE NX, then GT), the ids of
 * link members (ids_of), the valid ones (valid: the member's version is
 * the id's version in the id index), the ids a set of tags selects (pick),
 * emptying a tag key but keeping its TTL (reset), and dropping entries.
 */
static const char lua_prelude[] =
"local NEVER = 9999999999\n"
"local HDR = 34\n"
"local TRUST = 1000 * (30 * 86400 + 120)\n"
"local function n2s(x)\n"
"  return string.format('%d', x)\n"
"end\n"
"local function hdr(k, h)\n"
"  h = h or redis.call('GETRANGE', k, 0, 1023)\n"
"  if #h < HDR or string.byte(h, 1) ~= 3 then return nil end\n"
"  local v = string.sub(h, 3, 10)\n"
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
"  return v, m, tags, x\n"
"end\n"
"local function xttl(x, now, grace)\n"
"  local t = math.max(x - now, 0) + grace\n"
"  if t < 1 then t = 1 end\n"
"  return t\n"
"end\n"
"local function kttl(x, now, grace)\n"
"  return xttl(x, now, grace) + 5\n"
"end\n"
"local function push(k, t)\n"
"  redis.call('EXPIRE', k, t, 'NX')\n"
"  redis.call('EXPIRE', k, t, 'GT')\n"
"end\n"
"local function ids_of(ms)\n"
"  local ids, vs = {}, {}\n"
"  for _, m in ipairs(ms) do\n"
"    if #m > 8 then\n"
"      ids[#ids + 1] = string.sub(m, 9)\n"
"      vs[#vs + 1] = string.sub(m, 1, 8)\n"
"    end\n"
"  end\n"
"  return ids, vs\n"
"end\n"
"local function valid(ik, ms, now, out)\n"
"  out = out or {}\n"
"  local ids = {}\n"
"  for _, m in ipairs(ms) do\n"
"    if #m > 8 then ids[#ids + 1] = string.sub(m, 9) end\n"
"  end\n"
"  local k = 0\n"
"  for i = 1, #ids, 4000 do\n"
"    local j = math.min(i + 3999, #ids)\n"
"    local cur = redis.call('HMGET', ik, unpack(ids, i, j))\n"
"    for q = i, j do\n"
"      local c = cur[q - i + 1]\n"
"      k = k + 1\n"
"      while #ms[k] <= 8 do k = k + 1 end\n"
"      if c and string.sub(c, 1, 8) == string.sub(ms[k], 1, 8) and (not now or struct.unpack('<d', c, 9) >= now) then out[#out + 1] = ids[q] end\n"
"    end\n"
"  end\n"
"  return out\n"
"end\n"
"local function pick(H, ik, tags, mode, now)\n"
"  local jk, seen, out = H .. 'J', {}, {}\n"
"  for _, t in ipairs(tags) do\n"
"    local one = {}\n"
"    for _, id in ipairs(valid(ik, redis.call('SMEMBERS', H .. 's:' .. t), now)) do one[id] = true end\n"
"    for _, id in ipairs(valid(jk, redis.call('SMEMBERS', H .. 'f:' .. t), now)) do one[id] = true end\n"
"    for id in pairs(one) do seen[id] = (seen[id] or 0) + 1 end\n"
"  end\n"
"  if mode == 'not' then\n"
"    for _, k in ipairs({ik, jk}) do\n"
"      local all = redis.call('HGETALL', k)\n"
"      for i = 1, #all, 2 do\n"
"        local id = all[i]\n"
"        if id ~= '' and not seen[id] and (not now or struct.unpack('<d', all[i + 1], 9) >= now) then out[#out + 1] = id end\n"
"      end\n"
"    end\n"
"    return out\n"
"  end\n"
"  local need = 1\n"
"  if mode == 'all' then need = #tags end\n"
"  for id, c in pairs(seen) do\n"
"    if c >= need then out[#out + 1] = id end\n"
"  end\n"
"  return out\n"
"end\n"
"local function reset(k)\n"
"  local pt = redis.call('PTTL', k)\n"
"  if pt == -2 then return end\n"
"  redis.call('DEL', k)\n"
"  if pt > 0 then\n"
"    redis.call('SADD', k, '')\n"
"    redis.call('PEXPIRE', k, math.min(pt, TRUST))\n"
"  end\n"
"end\n"
"local function drop(H, ik, ids)\n"
"  if #ids == 0 then return 0 end\n"
"  local n, jk = 0, H .. 'J'\n"
"  local nj = redis.call('HLEN', jk)\n"
"  for i = 1, #ids, 4000 do\n"
"    local j = math.min(i + 3999, #ids)\n"
"    local keys, fl = {}, {}\n"
"    if nj > 0 then\n"
"      local cur = redis.call('HMGET', jk, unpack(ids, i, j))\n"
"      for k = i, j do\n"
"        if cur[k - i + 1] then\n"
"          local v, m, tags = hdr(H .. 'e:' .. ids[k])\n"
"          if v then\n"
"            for _, t in ipairs(tags) do redis.call('SREM', H .. 'f:' .. t, v .. ids[k]) end\n"
"          end\n"
"          fl[#fl + 1] = ids[k]\n"
"        end\n"
"      end\n"
"    end\n"
"    for k = i, j do keys[#keys + 1] = H .. 'e:' .. ids[k] end\n"
"    n = n + redis.call('DEL', unpack(keys))\n"
"    redis.call('HDEL', ik, unpack(ids, i, j))\n"
"    if #fl > 0 then redis.call('HDEL', jk, unpack(fl)) end\n"
"  end\n"
"  return n\n"
"end\n"
"local function tagkill(H, ik, t, nof)\n"
"  reset(H .. 's:' .. t)\n"
"  if not nof then\n"
"    redis.call('UNLINK', H .. 'f:' .. t)\n"
"    redis.call('SREM', H .. 'F', t)\n"
"  end\n"
"end\n";

/*
 * The save as a script: TwoLevel's journaled save (TCR_LUA_SAVE_J), and
 * the fallback of the MULTI/EXEC save (tc_redis.c) when a queued command
 * was refused (a redirection, READONLY, OOM...). The same writes as the
 * transaction. KEYS: entry, id index, registry, the tags' keys; ARGV: id,
 * record, index value (version .. expire), the entry's TTL ('' = none),
 * the keys' TTL, flags (one '1'/'0' per key: index, registry, tags: raise
 * its TTL, add its anchor), tags...
 */
static const char lua_save[] =
"local id, rec, ival, ettl, kt, fl, tok, oik = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]\n"
"local link = string.sub(ival, 1, 8) .. id\n"
"local n = #KEYS - 3\n"
"local reg = {}\n"
"for i = 1, n do\n"
"  local k = KEYS[3 + i]\n"
"  if string.byte(fl, 2 + i) == 49 then\n"
"    if tok ~= '' then\n"
"      redis.call('SADD', k, '', link)\n"
"      push(k, kt)\n"
"    else\n"
"      redis.call('SADD', k, link)\n"
"    end\n"
"    reg[#reg + 1] = ARGV[8 + i]\n"
"  else\n"
"    redis.call('SADD', k, link)\n"
"  end\n"
"end\n"
"if tok ~= '' then redis.call('HSETNX', KEYS[2], '', tok) end\n"
"redis.call('HSET', KEYS[2], id, ival)\n"
"redis.call('HDEL', oik, id)\n"
"if string.byte(fl, 1) == 49 and tok ~= '' then push(KEYS[2], kt) end\n"
"if #reg > 0 or string.byte(fl, 2) == 49 then\n"
"  if tok ~= '' then\n"
"    redis.call('SADD', KEYS[3], '', unpack(reg))\n"
"    push(KEYS[3], kt)\n"
"  elseif #reg > 0 then\n"
"    redis.call('SADD', KEYS[3], unpack(reg))\n"
"  end\n"
"end\n"
"if ettl == '' then redis.call('SET', KEYS[1], rec) else redis.call('SET', KEYS[1], rec, 'EX', ettl) end\n"
"if tok == '' then return '' end\n"
"return redis.call('HGET', KEYS[2], '')\n";

/* KEYS: entry, id index, registry; ARGV: H, id, now, grace. Its links go with it. */
static const char lua_remove[] =
"local H, id = ARGV[1], ARGV[2]\n"
"local v, m, tags, x = hdr(KEYS[1])\n"
"local n = redis.call('DEL', KEYS[1])\n"
"redis.call('HDEL', KEYS[2], id)\n"
"redis.call('HDEL', H .. 'J', id)\n"
"if v then\n"
"  local kind = 's:'\n"
"  if x >= NEVER then kind = 'f:' end\n"
"  for _, t in ipairs(tags) do redis.call('SREM', H .. kind .. t, v .. id) end\n"
"end\n"
"return n\n";

/*
 * KEYS: id index, registry, working set, second working set, the tags' keys;
 * ARGV: H, mode, now, grace, chunk, phase, tags...
 * mode any | all | not: the ids the tags select (pick) are dropped, at most
 * chunk per call (the rest in the working set, phase 1); returns what is
 * left. A clean by tags empties their keys (reset: the anchor and the TTL
 * stay). old: one HSCAN step of the id index (phase = the cursor), expired
 * entries dropped; returns the next cursor. flush: the entries, chunk by
 * chunk, then every registry tag's key reset, I kept with its token and TTL
 * (at most TRUST) and G with its names; returns what it did (0: done).
 */
static const char lua_clean[] =
"local H, mode = ARGV[1], ARGV[2]\n"
"local now, grace, chunk, phase = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]\n"
"local ik, rk, tmp = KEYS[1], KEYS[2], KEYS[3]\n"
"if mode == 'old' then\n"
"  local r = redis.call('HSCAN', ik, phase, 'COUNT', chunk)\n"
"  local ids, f = {}, r[2]\n"
"  for i = 1, #f, 2 do\n"
"    if f[i] ~= '' and (#f[i + 1] < 16 or struct.unpack('<d', f[i + 1], 9) < now) then ids[#ids + 1] = f[i] end\n"
"  end\n"
"  drop(H, ik, ids)\n"
"  return r[1]\n"
"end\n"
"if mode == 'flush' then\n"
"  if phase == '0' then\n"
"    redis.call('DEL', tmp)\n"
"    redis.call('SUNIONSTORE', tmp, rk, H .. 'F')\n"
"    redis.call('EXPIRE', tmp, 600)\n"
"  end\n"
"  local ids = {}\n"
"  for _, k in ipairs({ik, H .. 'J'}) do\n"
"    if #ids == 0 then\n"
"      for _, id in ipairs(redis.call('HRANDFIELD', k, chunk)) do if id ~= '' then ids[#ids + 1] = id end end\n"
"    end\n"
"  end\n"
"  if #ids > 0 then\n"
"    drop(H, ik, ids)\n"
"    return #ids\n"
"  end\n"
"  local names = redis.call('SPOP', tmp, 100)\n"
"  for _, t in ipairs(names) do\n"
"    if t ~= '' then\n"
"      drop(H, ik, pick(H, ik, {t}, 'any', nil))\n"
"      reset(H .. 's:' .. t)\n"
"      redis.call('UNLINK', H .. 'f:' .. t)\n"
"    end\n"
"  end\n"
"  if #names > 0 then return #names end\n"
"  if redis.call('HLEN', ik) > 1 or redis.call('EXISTS', H .. 'J') == 1 then return 1 end\n"
"  -- I (its token and TTL) and G (its names and TTL) stay, as the s: keys\n"
"  -- (reset): a process may trust the TTL it set on them\n"
"  local pt = redis.call('PTTL', ik)\n"
"  if pt > TRUST then redis.call('PEXPIRE', ik, TRUST) elseif pt == -1 then redis.call('DEL', ik) end\n"
"  redis.call('DEL', tmp, H .. 'F')\n"
"  return 0\n"
"end\n"
"local n = #KEYS - 4\n"
"if phase == '0' then\n"
"  redis.call('DEL', tmp)\n"
"  local tags = {}\n"
"  for i = 1, n do tags[i] = ARGV[6 + i] end\n"
"  if n == 1 and mode == 'any' then\n"
"    -- one tag (Magento's everyday clean): its valid links, no set algebra\n"
"    local t = tags[1]\n"
"    local ids = valid(ik, redis.call('SMEMBERS', KEYS[5]), nil)\n"
"    local nof = redis.call('EXISTS', H .. 'f:' .. t) == 0\n"
"    if not nof then valid(H .. 'J', redis.call('SMEMBERS', H .. 'f:' .. t), nil, ids) end\n"
"    if #ids <= chunk then\n"
"      drop(H, ik, ids)\n"
"      tagkill(H, ik, t, nof)\n"
"      return 0\n"
"    end\n"
"    for i = 1, #ids, 4000 do redis.call('SADD', tmp, unpack(ids, i, math.min(i + 3999, #ids))) end\n"
"    redis.call('EXPIRE', tmp, 600)\n"
"    return redis.call('SCARD', tmp)\n"
"  end\n"
"  local ids = pick(H, ik, tags, mode, nil)\n"
"  if #ids <= chunk then\n"
"    drop(H, ik, ids)\n"
"    if mode == 'any' then\n"
"      for i = 1, n do tagkill(H, ik, tags[i]) end\n"
"    end\n"
"    return 0\n"
"  end\n"
"  for i = 1, #ids, 4000 do redis.call('SADD', tmp, unpack(ids, i, math.min(i + 3999, #ids))) end\n"
"  redis.call('EXPIRE', tmp, 600)\n"
"end\n"
"local ids = redis.call('SPOP', tmp, chunk)\n"
"drop(H, ik, ids)\n"
"local left = redis.call('SCARD', tmp)\n"
"if left == 0 and mode == 'any' then\n"
"  for i = 1, n do\n"
"    local t = ARGV[6 + i]\n"
"    if #pick(H, ik, {t}, 'any', nil) == 0 then tagkill(H, ik, t) end\n"
"  end\n"
"end\n"
"return left\n";

/* KEYS: id index, two working sets (unused), the tags' keys;
 * ARGV: H, mode, now, ...: every live id that the mode selects. */
static const char lua_ids[] =
"local H, mode, now = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
"local ik = KEYS[1]\n"
"if mode == 'all' then\n"
"  local out = {}\n"
"  for _, k in ipairs({ik, H .. 'J'}) do\n"
"    local all = redis.call('HGETALL', k)\n"
"    for i = 1, #all, 2 do\n"
"      if all[i] ~= '' and #all[i + 1] >= 16 and struct.unpack('<d', all[i + 1], 9) >= now then out[#out + 1] = all[i] end\n"
"    end\n"
"  end\n"
"  return out\n"
"end\n"
"local tags = {}\n"
"for i = 6, #ARGV do tags[#tags + 1] = ARGV[i] end\n"
"if mode == 'all_of' then mode = 'all' end\n"
"return pick(H, ik, tags, mode, now)\n";

/*
 * KEYS: entry, id index, registry; ARGV: H, id, extra, now, grace,
 * force_expired. A later expiry raises the keys' TTLs first.
 */
static const char lua_touch[] =
"local H, id = ARGV[1], ARGV[2]\n"
"local extra, now, grace, force = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'\n"
"local ek, ik, rk = KEYS[1], KEYS[2], KEYS[3]\n"
"local v, m, tags, x = hdr(ek)\n"
"if not v then return 0 end\n"
"local nx\n"
"if force then\n"
"  nx = now - 1\n"
"else\n"
"  if x < now then return 0 end\n"
"  if x >= NEVER then return 1 end\n"
"  nx = x + extra\n"
"  if nx < now - 1 then nx = now - 1 end\n"
"  redis.call('SETRANGE', ek, 10, struct.pack('<d', now))\n"
"end\n"
"if x >= NEVER then\n"
"  -- a forever entry expired by force: into the keys of finite entries\n"
"  local kt = n2s(kttl(nx, now, grace) + 60)\n"
"  redis.call('HDEL', H .. 'J', id)\n"
"  for _, t in ipairs(tags) do\n"
"    redis.call('SREM', H .. 'f:' .. t, v .. id)\n"
"    redis.call('SADD', H .. 's:' .. t, '', v .. id)\n"
"    push(H .. 's:' .. t, kt)\n"
"  end\n"
"  redis.call('SADD', rk, '', unpack(tags))\n"
"  push(rk, kt)\n"
"  redis.call('HSET', ik, id, v .. struct.pack('<d', nx))\n"
"  push(ik, kt)\n"
"  redis.call('SETRANGE', ek, 26, struct.pack('<d', nx))\n"
"  redis.call('EXPIRE', ek, n2s(xttl(nx, now, grace)))\n"
"  return 1\n"
"end\n"
"if nx > x then\n"
"  local kt = n2s(kttl(nx, now, grace) + math.min(3600, math.max(60, math.floor((nx - now) / 4))))\n"
"  push(ik, kt)\n"
"  push(rk, kt)\n"
"  for _, t in ipairs(tags) do push(H .. 's:' .. t, kt) end\n"
"end\n"
"redis.call('SETRANGE', ek, 26, struct.pack('<d', nx))\n"
"redis.call('EXPIRE', ek, n2s(xttl(nx, now, grace)))\n"
"local cur = redis.call('HGET', ik, id)\n"
"if cur and string.sub(cur, 1, 8) == v then redis.call('HSET', ik, id, v .. struct.pack('<d', nx)) end\n"
"return 1\n";

/* KEYS: entry. Its header and tags, without the value. */
static const char lua_meta[] =
"local h = redis.call('GETRANGE', KEYS[1], 0, 33)\n"
"if #h < 34 then return false end\n"
"if string.byte(h, 1) ~= 3 then return h end\n"
"local tl = struct.unpack('<I4', h, 19)\n"
"if tl == 0 then return h end\n"
"return h .. redis.call('GETRANGE', KEYS[1], 34, 33 + tl)\n";

/*
 * KEYS: entry, id index; ARGV: H, id, now, grace, read_only.
 * A load that also checks the entry's links: under an eviction policy Redis
 * may evict a tag's key (which a later save may create again without this
 * entry), and an entry a clean by that tag could not reach must not be
 * served. The id index must hold the record's version and every tag the
 * link version .. id. Such an entry is a miss, and removed on a master.
 */
static const char lua_loadv[] =
"local NEVER = 9999999999\n"
"local v = redis.call('GET', KEYS[1])\n"
"if not v then return false end\n"
"if #v < 34 or string.byte(v, 1) ~= 3 then return v end\n"
"local H, id, now = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
"if struct.unpack('<d', v, 27) < now then return v end\n"
"local ver = string.sub(v, 3, 10)\n"
"local tl = struct.unpack('<I4', v, 19)\n"
"local ik, kind = KEYS[2], 's:'\n"
"if struct.unpack('<d', v, 27) >= NEVER then ik, kind = H .. 'J', 'f:' end\n"
"local cur = redis.call('HGET', ik, id)\n"
"local ok = cur and string.sub(cur, 1, 8) == ver\n"
"local p, stop = 35, 34 + tl\n"
"while ok and p + 1 <= stop do\n"
"  local l = struct.unpack('<I2', v, p)\n"
"  ok = redis.call('SISMEMBER', H .. kind .. string.sub(v, p + 2, p + 1 + l), ver .. id) == 1\n"
"  p = p + 2 + l\n"
"end\n"
"if ok then return v end\n"
"if ARGV[5] ~= '1' then\n"
"  redis.call('DEL', KEYS[1])\n"
"  if cur and string.sub(cur, 1, 8) == ver then redis.call('HDEL', ik, id) end\n"
"end\n"
"return false\n";

/*
 * KEYS: id index (the shard's slot); ARGV: H, key names of one SCAN step.
 * clean('all'), last: unlinks the keys of layout 2 among them (t:, and e:
 * records whose format byte is not 3; i and T are given only by name, after
 * the SCANs). Returns how many.
 */
static const char lua_purge2[] =
"local H, n = ARGV[1], 0\n"
"for i = 2, #ARGV do\n"
"  local k = ARGV[i]\n"
"  local x = string.sub(k, #H + 1)\n"
"  if string.sub(k, 1, #H) == H then\n"
"    local old = x == 'i' or x == 'T' or string.sub(x, 1, 2) == 't:'\n"
"    if not old and string.sub(x, 1, 2) == 'e:' then\n"
"      local b = redis.pcall('GETRANGE', k, 0, 0)\n"
"      old = type(b) == 'string' and b ~= '' and string.byte(b, 1) ~= 3\n"
"    end\n"
"    if old then n = n + redis.call('UNLINK', k) end\n"
"  end\n"
"end\n"
"return n\n";

/*
 * KEYS: registry, id index; ARGV: H, now, grace, cursor, count.
 * clean('old'), second pass, one SSCAN step of the registry: stale links
 * leave their tag, names whose key is gone leave the registry, a tag key
 * without a TTL gets one. Returns the next cursor.
 */
static const char lua_gctags[] =
"local H, now, grace, kind = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[6]\n"
"local rk, ik = KEYS[1], KEYS[2]\n"
"if kind == 'f:' then rk, ik = H .. 'F', H .. 'J' end\n"
"local r = redis.call('SSCAN', rk, ARGV[4], 'COUNT', ARGV[5])\n"
"for _, t in ipairs(r[2]) do\n"
"  if t ~= '' then\n"
"    local tk = H .. kind .. t\n"
"    if redis.call('EXISTS', tk) == 0 then\n"
"      redis.call('SREM', rk, t)\n"
"    else\n"
"      local ms = redis.call('SMEMBERS', tk)\n"
"      local ids, vs = ids_of(ms)\n"
"      local stale, top = {}, nil\n"
"      for i = 1, #ids, 4000 do\n"
"        local j = math.min(i + 3999, #ids)\n"
"        local cur = redis.call('HMGET', ik, unpack(ids, i, j))\n"
"        for k = i, j do\n"
"          local c = cur[k - i + 1]\n"
"          if c and string.sub(c, 1, 8) == vs[k] then\n"
"            local x = struct.unpack('<d', c, 9)\n"
"            if not top or x > top then top = x end\n"
"          else\n"
"            stale[#stale + 1] = vs[k] .. ids[k]\n"
"          end\n"
"        end\n"
"      end\n"
"      for i = 1, #stale, 4000 do redis.call('SREM', tk, unpack(stale, i, math.min(i + 3999, #stale))) end\n"
"      if kind == 's:' and redis.call('TTL', tk) == -1 then\n"
"        redis.call('SADD', tk, '')\n"
"        redis.call('EXPIRE', tk, n2s(kttl(top or now, now, grace)))\n"
"      end\n"
"    end\n"
"  end\n"
"end\n"
"return r[1]\n";

/*
 * KEYS: registry, id index; ARGV: now, cursor, count, H.
 * One SSCAN step of the registry: {next cursor, the names with a valid link}.
 */
static const char lua_tags[] =
"local rk, ik = KEYS[1], KEYS[2]\n"
"local now, H, kind = tonumber(ARGV[1]), ARGV[4], ARGV[5]\n"
"if kind == 'f:' then rk, ik = H .. 'F', H .. 'J' end\n"
"local r = redis.call('SSCAN', rk, ARGV[2], 'COUNT', ARGV[3])\n"
"local out = {}\n"
"for _, t in ipairs(r[2]) do\n"
"  if t ~= '' then\n"
"    local tk = H .. kind .. t\n"
"    local ms = redis.call('SRANDMEMBER', tk, 8)\n"
"    local live = #valid(ik, ms, now) > 0\n"
"    if not live and redis.call('SCARD', tk) > #ms then live = #valid(ik, redis.call('SMEMBERS', tk), now) > 0 end\n"
"    if live then out[#out + 1] = t end\n"
"  end\n"
"end\n"
"return {r[1], out}\n";

/*
 * KEYS: id index, registry; ARGV: H, now, grace, ids... (entries found
 * by SCAN). One string per problem: an entry live (or expired less than
 * grace ago) without its index version or a link, a key that would expire
 * before it.
 */
static const char lua_verify[] =
"local H, now, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
"local ik, rk = KEYS[1], KEYS[2]\n"
"local out = {}\n"
"local function keyttl(k)\n"
"  local t = redis.call('PTTL', k)\n"
"  if t == -1 or t > 1000 * 999999999 then return math.huge end\n"
"  return t\n"
"end\n"
"for i = 4, #ARGV do\n"
"  local id = ARGV[i]\n"
"  local ek = H .. 'e:' .. id\n"
"  local v, m, tags, x = hdr(ek)\n"
"  if not v then\n"
"    if redis.call('EXISTS', ek) == 1 then out[#out + 1] = 'entry ' .. id .. ': unreadable record' end\n"
"  elseif x >= now - grace - 1 then\n"
"    local et = keyttl(ek)\n"
"    if (x >= NEVER) ~= (et == math.huge) then out[#out + 1] = 'entry ' .. id .. ': TTL does not match its expire' end\n"
"    local iik, kind, rrk = ik, 's:', rk\n"
"    if x >= NEVER then iik, kind, rrk = H .. 'J', 'f:', H .. 'F' end\n"
"    local cur = redis.call('HGET', iik, id)\n"
"    if not cur then out[#out + 1] = 'entry ' .. id .. ': not in the id index'\n"
"    elseif string.sub(cur, 1, 8) ~= v then out[#out + 1] = 'entry ' .. id .. ': the id index has another version'\n"
"    elseif struct.unpack('<d', cur, 9) ~= x then out[#out + 1] = 'entry ' .. id .. ': the id index has another expire'\n"
"    elseif keyttl(iik) + 1000 < et then out[#out + 1] = 'entry ' .. id .. ': the id index expires before it' end\n"
"    for _, t in ipairs(tags) do\n"
"      local tk = H .. kind .. t\n"
"      if redis.call('SISMEMBER', tk, v .. id) == 0 then out[#out + 1] = 'entry ' .. id .. ': no link in tag ' .. t\n"
"      elseif keyttl(tk) + 1000 < et then out[#out + 1] = 'entry ' .. id .. ': tag ' .. t .. ' expires before it' end\n"
"      if redis.call('SISMEMBER', rrk, t) == 0 then out[#out + 1] = 'tag ' .. t .. ' of entry ' .. id .. ' is not in the tag registry' end\n"
"    end\n"
"  end\n"
"end\n"
"return out\n";

/*
 * TwoLevel's invalidation journal (tc_redis_journal.c): three keys on shard
 * 0, JK = {seq, log, epoch}, JA = {record, a new epoch id, records kept}.
 * The append keeps the three consistent: a missing epoch (a flush, an
 * eviction, a restart that lost it) makes a new one and empties the log.
 */
#define LUA_JOURNAL_APPEND \
"local je = redis.call('GET', JK[3])\n" \
"if not je then redis.call('SET', JK[3], JA[2]); redis.call('DEL', JK[2]) end\n" \
"local jseq = redis.call('INCR', JK[1])\n" \
"local jn = redis.call('RPUSH', JK[2], JA[1])\n" \
"local jkeep = tonumber(JA[3])\n" \
"if jn > jkeep then redis.call('LTRIM', JK[2], jn - jkeep, -1) end\n"

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
 * the end of KEYS and its three arguments at the end of ARGV. The script's
 * own text runs unchanged inside a function on KEYS and ARGV without them
 * (locals that shadow the globals), then the record is appended, in the
 * same atomic step: a process killed after the write cannot leave the
 * other nodes unaware of it. A write that fails runs no append (a script
 * error stops it); a clean's first write is still its DEL.
 */
static const char lua_jwrap_head[] =
"local JK, JA, KEYS, ARGV = (function(K, A)\n"
"  local k, a, jk, ja = {}, {}, {}, {}\n"
"  for i = 1, #K - 3 do k[i] = K[i] end\n"
"  for i = 1, #A - 3 do a[i] = A[i] end\n"
"  for i = 1, 3 do jk[i] = K[#K - 3 + i]; ja[i] = A[#A - 3 + i] end\n"
"  return jk, ja, k, a\n"
"end)(KEYS, ARGV)\n"
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

/* A script: an optional head, the helpers (or not), the body;
 * journaled: inside lua_jwrap_head and lua_jwrap_tail. */
static char *script_join(const char *head, int prelude, const char *body, int journaled)
{
	size_t hl = head ? strlen(head) : 0, pl = prelude ? sizeof(lua_prelude) - 1 : 0, bl = strlen(body);
	size_t wh = journaled ? sizeof(lua_jwrap_head) - 1 : 0, wt = journaled ? sizeof(lua_jwrap_tail) - 1 : 0;
	char *s = malloc(wh + hl + pl + bl + wt + 1), *w = s;

	if (s) {
		memcpy(w, lua_jwrap_head, wh);
		w += wh;
		memcpy(w, head ? head : "", hl);
		w += hl;
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
		[TCR_LUA_SAVE] = {NULL, 1, lua_save, 0},
		[TCR_LUA_REMOVE] = {NULL, 1, lua_remove, 0},
		[TCR_LUA_CLEAN] = {NULL, 1, lua_clean, 0},
		[TCR_LUA_SAVE_J] = {NULL, 1, lua_save, 1},
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
		[TCR_LUA_PURGE2] = {NULL, 0, lua_purge2},
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
	for (attempt = 0; attempt < 3; attempt++) {
		r = tcr_shard_cmd(st, shard, read, argc + 3, av, al);
		if (!r || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOSCRIPT", 8) != 0 || attempt > 1) {
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
