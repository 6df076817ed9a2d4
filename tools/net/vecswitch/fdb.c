// SPDX-License-Identifier: GPL-2.0
/*
 * fdb.c - the forwarding table: (MAC, VLAN) -> port, with learning, moves,
 * aging, a total limit and a per-port limit; and how a MAC address is
 * written out.
 *
 * Entries live in one preallocated array chained into hash buckets, so the
 * table never allocates after start-up and a flood of random source MACs
 * costs at most fdb_max entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vecswitch.h"

static unsigned int fdb_hash(const uint8_t *mac, uint16_t vlan,
			     unsigned int mask)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < 6; i++)
		h = (h ^ mac[i]) * 16777619u;
	h = (h ^ (vlan & 0xff)) * 16777619u;
	h = (h ^ (vlan >> 8)) * 16777619u;
	return h & mask;
}

int vs_fdb_init(struct vs_fdb *fdb, unsigned int max)
{
	unsigned int i, n = 16;

	while (n < max * 2)
		n <<= 1;
	fdb->ent = calloc(max, sizeof(*fdb->ent));
	fdb->bucket = malloc(n * sizeof(*fdb->bucket));
	if (!fdb->ent || !fdb->bucket) {
		free(fdb->ent);
		free(fdb->bucket);
		return -1;
	}
	for (i = 0; i < n; i++)
		fdb->bucket[i] = -1;
	for (i = 0; i < max; i++)
		fdb->ent[i].next = i + 1 < max ? (int)i + 1 : -1;
	fdb->nbuckets = n;
	fdb->max = max;
	fdb->count = 0;
	fdb->free_head = 0;
	return 0;
}

void vs_fdb_fini(struct vs_fdb *fdb)
{
	free(fdb->ent);
	free(fdb->bucket);
	fdb->ent = NULL;
	fdb->bucket = NULL;
}

static int *fdb_find_link(struct vs_fdb *fdb, const uint8_t *mac,
			  uint16_t vlan)
{
	int *link = &fdb->bucket[fdb_hash(mac, vlan, fdb->nbuckets - 1)];

	while (*link >= 0) {
		struct vs_fdb_entry *e = &fdb->ent[*link];

		if (e->vlan == vlan && !memcmp(e->mac, mac, 6))
			return link;
		link = &e->next;
	}
	return link;
}

static void fdb_unlink(struct vs_switch *sw, int *link)
{
	struct vs_fdb *fdb = &sw->fdb;
	int idx = *link;
	struct vs_fdb_entry *e = &fdb->ent[idx];

	if (e->port->chan.n)
		vs_chan_forget(sw, e->port, e->mac);
	*link = e->next;
	e->port->fdb_count--;
	e->used = false;
	e->port = NULL;
	e->next = fdb->free_head;
	fdb->free_head = idx;
	fdb->count--;
}

/*
 * An entry not seen for --age is stale, unless a shortcut channel (chan.c)
 * carries its frames past the switch: that counts as seen.
 */
static bool fdb_expired(const struct vs_switch *sw,
			const struct vs_fdb_entry *e)
{
	return sw->cfg.age &&
	       sw->now_ms - e->seen_ms >= (uint64_t)sw->cfg.age * 1000 &&
	       !(e->port->chan.n && !e->vlan && vs_chan_holds(e->port, e->mac));
}

struct vs_port *vs_fdb_lookup(struct vs_switch *sw, const uint8_t *mac,
			      uint16_t vlan)
{
	int *link = fdb_find_link(&sw->fdb, mac, vlan);
	struct vs_fdb_entry *e;

	if (*link < 0)
		return NULL;
	e = &sw->fdb.ent[*link];
	/* the sweep runs once a second; do not forward on a stale entry */
	if (fdb_expired(sw, e) || e->port->dead)
		return NULL;
	return e->port;
}

/* The port that owns mac on any VLAN, used by --mac-lock. */
struct vs_port *vs_fdb_owner(struct vs_switch *sw, const uint8_t *mac)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->locked && !memcmp(p->lock_mac, mac, 6))
			return p;
	}
	return NULL;
}

/* Entries the ports of user @uid own */
static unsigned int user_fdb_count(const struct vs_switch *sw, uint32_t uid)
{
	unsigned int i, n = 0;

	for (i = 0; i < sw->nports; i++) {
		const struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->has_owner && p->owner_uid == uid)
			n += p->fdb_count;
	}
	return n;
}

/*
 * A port may hold this many entries: a guest few, the uplink a LAN's;
 * and the ports of one non-root user together --fdb-user-max.
 */
static bool fdb_port_full(const struct vs_switch *sw, const struct vs_port *p)
{
	if (p->fdb_count >= (p->uplink ? sw->cfg.fdb_uplink_max :
					  sw->cfg.fdb_port_max))
		return true;
	return p->has_owner && p->owner_uid &&
	       user_fdb_count(sw, p->owner_uid) >= sw->cfg.fdb_user_max;
}

/*
 * An address still in use on @from was sent from @to: a guest that moved,
 * or two guests with one MAC, which then lose each other's frames.  Said
 * at most every VS_FDB_MOVED_LOG_MS; fdb_moves counts them all.
 */
#define VS_FDB_MOVED_LOG_MS	10000

static void fdb_moved_in_use(struct vs_switch *sw, const struct vs_port *from,
			     const struct vs_port *to, const char *mac)
{
	struct vs_fdb *fdb = &sw->fdb;

	if (fdb->moved_log_ms && sw->now_ms < fdb->moved_log_ms + VS_FDB_MOVED_LOG_MS)
		return;
	fdb->moved_log_ms = sw->now_ms ? sw->now_ms : 1;
	vs_log(sw, 0,
	       "fdb: %s moved from port %u (%s) to port %u (%s) while in use: two guests with the same MAC address? (fdb_moves %llu; said once in %u s)",
	       mac, from->id, from->name, to->id, to->name,
	       (unsigned long long)sw->st.fdb_moves, VS_FDB_MOVED_LOG_MS / 1000);
}

/*
 * @mac on @vlan was seen coming from @p.  Returns true when the table
 * has it on @p now, false when @p had no room left for it (fdb_full):
 * then the address stays where it was, or unknown.
 */
bool vs_fdb_learn(struct vs_switch *sw, struct vs_port *p,
		  const uint8_t *mac, uint16_t vlan)
{
	struct vs_fdb *fdb = &sw->fdb;
	int *link = fdb_find_link(fdb, mac, vlan);
	struct vs_fdb_entry *e;
	char m[18];
	int idx;

	if (*link >= 0) {
		e = &fdb->ent[*link];
		if (e->port != p) {
			if (fdb_port_full(sw, p)) {
				p->st.fdb_full++;
				return false;
			}
			vs_mac_str(m, mac);
			if (!fdb_expired(sw, e)) {
				sw->st.fdb_moves++;
				fdb_moved_in_use(sw, e->port, p, m);
			}
			vs_log(sw, 2, "fdb: %s vlan %u moves from port %u to %u",
			       m, vlan, e->port->id, p->id);
			vs_ev_fdb(sw, mac, vlan, e->port, p);
			if (e->port->chan.n)
				vs_chan_forget(sw, e->port, mac);
			e->port->fdb_count--;
			e->port = p;
			p->fdb_count++;
		}
		e->seen_ms = sw->now_ms;
		return true;
	}

	if (fdb->free_head < 0 || fdb_port_full(sw, p)) {
		p->st.fdb_full++;
		return false;
	}
	idx = fdb->free_head;
	e = &fdb->ent[idx];
	fdb->free_head = e->next;
	memcpy(e->mac, mac, 6);
	e->vlan = vlan;
	e->port = p;
	e->seen_ms = sw->now_ms;
	e->used = true;
	e->next = -1;
	*link = idx;
	fdb->count++;
	p->fdb_count++;
	vs_mac_str(m, mac);
	vs_log(sw, 2, "fdb: learned %s vlan %u on port %u", m, vlan, p->id);
	vs_ev_fdb(sw, mac, vlan, NULL, p);
	return true;
}

/* Remove every entry that matches: a given port, or (port NULL) expired. */
static void fdb_remove_if(struct vs_switch *sw, struct vs_port *p)
{
	struct vs_fdb *fdb = &sw->fdb;
	unsigned int b;

	for (b = 0; b < fdb->nbuckets; b++) {
		int *link = &fdb->bucket[b];

		while (*link >= 0) {
			struct vs_fdb_entry *e = &fdb->ent[*link];

			if (p ? e->port == p : fdb_expired(sw, e)) {
				if (!p) {
					sw->st.fdb_aged++;
					vs_ev_fdb(sw, e->mac, e->vlan, e->port, NULL);
				}
				fdb_unlink(sw, link);
			} else {
				link = &e->next;
			}
		}
	}
}

void vs_fdb_flush_port(struct vs_switch *sw, struct vs_port *p)
{
	if (p->fdb_count)
		fdb_remove_if(sw, p);
}

void vs_fdb_sweep(struct vs_switch *sw)
{
	if (sw->cfg.age && sw->fdb.count)
		fdb_remove_if(sw, NULL);
}

