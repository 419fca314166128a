/*
 * bench/gen — writes the benchmark layers, deterministically (the same
 * bytes on every machine, from a fixed-seed generator):
 *
 *   ub_gen arrays OUT [MB]  meshes with points/normals/uv arrays, animated
 *                           transforms and some animated points (array-heavy)
 *   ub_gen prims OUT [MB]   ~100k small prims with metadata (prim-heavy)
 *   ub_gen frames DIR [MB]  a file-per-frame crowd simulation: 2000 frames
 *                           (scaled by MB/100) DIR/sim.NNNN.usda of 20
 *                           agents x 500 points, for `usdbake stitch`
 *   ub_gen clips DIR FRAMES [MB]
 *                           a file-per-frame simulation shot: DIR/shot.usda
 *                           (a prim with template clip metadata over a
 *                           reference to DIR/topology.usda), a manifest and
 *                           FRAMES clips DIR/clips/crowd.NNNN.usda of 20
 *                           agents; at MB = 100, 500 points per agent (200
 *                           frames: ~60 MB of text)
 *
 * MB defaults to 100; generation stops at the first prim that reaches it.
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gen {
    FILE *f;
    uint64_t state;
    long long bytes;
} gen;

/* xorshift64*: small, fast, and identical everywhere. */
static uint64_t gen_next(gen *g)
{
    g->state ^= g->state >> 12;
    g->state ^= g->state << 25;
    g->state ^= g->state >> 27;
    return g->state * 2685821657736338717ULL;
}

/* Uniform in [lo, hi), rounded to 4 decimals so the text looks authored. */
static double gen_real(gen *g, double lo, double hi)
{
    double u = (double)(gen_next(g) >> 11) / 9007199254740992.0;
    long long k = (long long)((lo + u * (hi - lo)) * 10000.0);
    return (double)k / 10000.0;
}

static void out(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out(gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(g->f, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->bytes += n;
}

static void header(gen *g, const char *doc)
{
    out(g, "#usda 1.0\n(\n    defaultPrim = \"World\"\n"
           "    doc = \"%s\"\n    endTimeCode = 48\n    metersPerUnit = 0.01\n"
           "    startTimeCode = 1\n    timeCodesPerSecond = 24\n"
           "    upAxis = \"Y\"\n)\n\n",
        doc);
}

/* One grid mesh of n x n vertices. */
static void mesh(gen *g, int id, int n, int animated_points)
{
    int nv = n * n, nf = (n - 1) * (n - 1);
    double cx = gen_real(g, -500, 500), cz = gen_real(g, -500, 500);
    out(g, "    def Mesh \"mesh_%05d\" (\n        kind = \"component\"\n    )\n"
           "    {\n",
        id);
    out(g, "        float3[] extent = [(%.4f, -1, %.4f), (%.4f, 1, %.4f)]\n",
        cx - 1, cz - 1, cx + 1, cz + 1);
    out(g, "        int[] faceVertexCounts = [");
    for (int i = 0; i < nf; i++)
        out(g, i ? ", 4" : "4");
    out(g, "]\n        int[] faceVertexIndices = [");
    for (int y = 0, k = 0; y < n - 1; y++)
        for (int x = 0; x < n - 1; x++, k++) {
            int v = y * n + x;
            out(g, "%s%d, %d, %d, %d", k ? ", " : "", v, v + 1, v + n + 1,
                v + n);
        }
    out(g, "]\n        normal3f[] normals = [");
    for (int i = 0; i < nv; i++)
        out(g, "%s(%.4f, %.4f, %.4f)", i ? ", " : "", gen_real(g, -0.2, 0.2),
            gen_real(g, 0.9, 1), gen_real(g, -0.2, 0.2));
    out(g, "] (\n            interpolation = \"vertex\"\n        )\n");
    if (animated_points) {
        out(g, "        point3f[] points.timeSamples = {\n");
        for (int t = 1; t <= 48; t += 12) {
            out(g, "            %d: [", t);
            for (int i = 0; i < nv; i++)
                out(g, "%s(%.4f, %.4f, %.4f)", i ? ", " : "",
                    cx + (i % n) * 0.1, gen_real(g, -0.5, 0.5),
                    cz + (i / n) * 0.1);
            out(g, "],\n");
        }
        out(g, "        }\n");
    } else {
        out(g, "        point3f[] points = [");
        for (int i = 0; i < nv; i++)
            out(g, "%s(%.4f, %.4f, %.4f)", i ? ", " : "", cx + (i % n) * 0.1,
                gen_real(g, -0.5, 0.5), cz + (i / n) * 0.1);
        out(g, "]\n");
    }
    out(g, "        texCoord2f[] primvars:st = [");
    for (int i = 0; i < nv; i++)
        out(g, "%s(%.4f, %.4f)", i ? ", " : "", (double)(i % n) / (n - 1),
            (double)(i / n) / (n - 1));
    out(g, "] (\n            interpolation = \"vertex\"\n        )\n");
    out(g, "        uniform token subdivisionScheme = \"none\"\n");
    out(g, "        float3 xformOp:rotateXYZ.timeSamples = {\n");
    for (int t = 1; t <= 48; t++)
        out(g, "            %d: (0, %.4f, 0),\n", t, t * 7.5);
    out(g, "        }\n        double3 xformOp:translate.timeSamples = {\n");
    for (int t = 1; t <= 48; t++)
        out(g, "            %d: (%.4f, %.4f, %.4f),\n", t, cx,
            gen_real(g, 0, 10), cz);
    out(g, "        }\n        uniform token[] xformOpOrder = "
           "[\"xformOp:translate\", \"xformOp:rotateXYZ\"]\n    }\n\n");
}

static void arrays(gen *g, long long target)
{
    header(g, "usdbake benchmark: array-heavy layer");
    out(g, "def Xform \"World\"\n{\n");
    for (int id = 0; g->bytes < target; id++)
        mesh(g, id, 32, id % 10 == 0);
    out(g, "}\n\n");
}

static const char *const kinds[] = {"component", "subcomponent", "assembly",
                                    "group"};

static void small_prim(gen *g, int id)
{
    int look = (int)(gen_next(g) % 64);
    out(g, "        def Xform \"prop_%06d\" (\n", id);
    out(g, "            assetInfo = {\n"
           "                asset identifier = @./props/prop_%d.usda@\n"
           "                string name = \"prop_%d\"\n"
           "                string version = \"%d.%d\"\n            }\n",
        id % 500, id % 500, (int)(gen_next(g) % 9), (int)(gen_next(g) % 20));
    out(g, "            customData = {\n"
           "                int id = %d\n"
           "                bool reviewed = %d\n"
           "                double weight = %.4f\n            }\n",
        id, (int)(gen_next(g) & 1), gen_real(g, 0, 100));
    out(g, "            doc = \"set dressing prop %d, placed by layout\"\n", id);
    out(g, "            kind = \"%s\"\n", kinds[gen_next(g) % 4]);
    out(g, "            prepend apiSchemas = [\"MaterialBindingAPI\"]\n");
    out(g, "        )\n        {\n");
    out(g, "            custom string department = \"layout\"\n");
    out(g, "            rel material:binding = </World/Looks/look_%02d>\n",
        look);
    out(g, "            float radius = %.4f (\n"
           "                doc = \"bounding radius in cm\"\n            )\n",
        gen_real(g, 0.5, 20));
    out(g, "            token visibility = \"inherited\"\n");
    out(g, "            double3 xformOp:translate = (%.4f, %.4f, %.4f)\n",
        gen_real(g, -1000, 1000), gen_real(g, 0, 50),
        gen_real(g, -1000, 1000));
    out(g, "            uniform token[] xformOpOrder = "
           "[\"xformOp:translate\"]\n        }\n\n");
}

static void prims(gen *g, long long target)
{
    header(g, "usdbake benchmark: prim-heavy layer");
    out(g, "def Xform \"World\"\n{\n    def Scope \"Looks\"\n    {\n");
    for (int i = 0; i < 64; i++)
        out(g, "        def Material \"look_%02d\"\n        {\n        }\n\n",
            i);
    out(g, "    }\n\n");
    int id = 0;
    for (int group = 0; g->bytes < target; group++) {
        out(g, "    def Xform \"set_%04d\" (\n        kind = \"group\"\n    )\n"
               "    {\n",
            group);
        for (int k = 0; k < 1000 && g->bytes < target; k++)
            small_prim(g, id++);
        out(g, "    }\n\n");
    }
    out(g, "}\n\n");
}

/* One frame of the crowd: 20 agents of 500 points each, moving; their
 * ids and purpose do not change (they go to the stitched topology). */
static void frame(gen *g, int f)
{
    out(g, "#usda 1.0\n(\n    endTimeCode = %d\n    startTimeCode = %d\n"
           ")\n\ndef Xform \"World\"\n{\n    def Scope \"crowd\"\n    {\n",
        f, f);
    for (int a = 0; a < 20; a++) {
        out(g, "        def Points \"agent_%02d\"\n        {\n", a);
        out(g, "            int64[] ids = [");
        for (int i = 0; i < 500; i++)
            out(g, "%s%d", i ? ", " : "", a * 500 + i);
        out(g, "]\n            point3f[] points.timeSamples = {\n"
               "                %d: [",
            f);
        for (int i = 0; i < 500; i++)
            out(g, "%s(%.4f, %.4f, %.4f)", i ? ", " : "",
                gen_real(g, -100, 100), gen_real(g, 0, 10),
                gen_real(g, -100, 100));
        out(g, "],\n            }\n"
               "            uniform token purpose = \"render\"\n"
               "            float speed.timeSamples = {\n"
               "                %d: %.4f,\n            }\n        }\n",
            f, gen_real(g, 0, 3));
    }
    out(g, "    }\n}\n");
}

static int frames(const char *dir, long long mb)
{
    long long n = 2000 * mb / 100;
    if (n < 10)
        n = 10;
    gen g = {NULL, 0x9E3779B97F4A7C15ULL, 0};
    size_t dl = strlen(dir);
    char *path = malloc(dl + 32);
    if (!path)
        return 1;
    for (long long f = 1; f <= n; f++) {
        snprintf(path, dl + 32, "%s/sim.%04lld.usda", dir, f);
        g.f = fopen(path, "wb");
        if (!g.f) {
            fprintf(stderr, "ub_gen: cannot write %s: %s\n", path,
                    strerror(errno));
            free(path);
            return 1;
        }
        frame(&g, (int)f);
        if (fclose(g.f) != 0) {
            fprintf(stderr, "ub_gen: cannot write %s: %s\n", path,
                    strerror(errno));
            free(path);
            return 1;
        }
    }
    free(path);
    return 0;
}

/* --- the clip shot -------------------------------------------------------- */

enum { CLIP_AGENTS = 20 };

static int clip_file(gen *g, const char *path)
{
    g->f = fopen(path, "wb");
    if (!g->f) {
        fprintf(stderr, "ub_gen: cannot write %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    return 0;
}

static int clip_close(gen *g, const char *path)
{
    if (fclose(g->f) != 0) {
        fprintf(stderr, "ub_gen: cannot write %s: %s\n", path,
                strerror(errno));
        remove(path);
        return -1;
    }
    return 0;
}

static int clips(const char *dir, int frames, long long mb)
{
    int npts = (int)(500 * mb / 100);
    if (npts < 4)
        npts = 4;
    char path[4096];
    gen g = {NULL, 0x9E3779B97F4A7C15ULL, 0};
    snprintf(path, sizeof path, "%s/clips", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return -1;
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return -1;
    /* the topology: what does not move */
    snprintf(path, sizeof path, "%s/topology.usda", dir);
    if (clip_file(&g, path))
        return -1;
    out(&g, "#usda 1.0\n\ndef Xform \"Crowd\"\n{\n");
    for (int a = 0; a < CLIP_AGENTS; a++) {
        out(&g, "    def Points \"agent_%02d\"\n    {\n"
                "        point3f[] points\n",
            a);
        out(&g, "        float[] widths = [");
        for (int i = 0; i < npts; i++)
            out(&g, i ? ", %.4f" : "%.4f", gen_real(&g, 0.5, 2));
        out(&g, "] (\n            interpolation = \"vertex\"\n        )\n"
                "    }\n");
    }
    out(&g, "}\n\n");
    if (clip_close(&g, path))
        return -1;
    /* the manifest: which attributes the clips animate */
    snprintf(path, sizeof path, "%s/manifest.usda", dir);
    if (clip_file(&g, path))
        return -1;
    out(&g, "#usda 1.0\n\nover \"Crowd\"\n{\n");
    for (int a = 0; a < CLIP_AGENTS; a++)
        out(&g, "    over \"agent_%02d\"\n    {\n"
                "        point3f[] points\n    }\n",
            a);
    out(&g, "}\n\n");
    if (clip_close(&g, path))
        return -1;
    /* the shot */
    snprintf(path, sizeof path, "%s/shot.usda", dir);
    if (clip_file(&g, path))
        return -1;
    out(&g, "#usda 1.0\n(\n    defaultPrim = \"World\"\n"
            "    endTimeCode = %d\n    startTimeCode = 1\n"
            "    timeCodesPerSecond = 24\n    upAxis = \"Y\"\n)\n\n",
        frames);
    out(&g, "def Xform \"World\"\n{\n"
            "    def Xform \"Crowd\" (\n"
            "        clips = {\n"
            "            dictionary default = {\n"
            "                asset manifestAssetPath = @./manifest.usda@\n"
            "                string primPath = \"/Crowd\"\n"
            "                string templateAssetPath = "
            "\"./clips/crowd.####.usda\"\n"
            "                double templateEndTime = %d\n"
            "                double templateStartTime = 1\n"
            "                double templateStride = 1\n"
            "            }\n"
            "        }\n"
            "        prepend references = @./topology.usda@</Crowd>\n"
            "    )\n    {\n    }\n}\n\n",
        frames);
    if (clip_close(&g, path))
        return -1;
    /* one clip per frame: every agent's points at that frame */
    double base[CLIP_AGENTS][2];
    for (int a = 0; a < CLIP_AGENTS; a++) {
        base[a][0] = gen_real(&g, -100, 100);
        base[a][1] = gen_real(&g, -100, 100);
    }
    for (int f = 1; f <= frames; f++) {
        snprintf(path, sizeof path, "%s/clips/crowd.%04d.usda", dir, f);
        if (clip_file(&g, path))
            return -1;
        out(&g, "#usda 1.0\n(\n    endTimeCode = %d\n    startTimeCode = %d\n"
                ")\n\nover \"Crowd\"\n{\n",
            f, f);
        for (int a = 0; a < CLIP_AGENTS; a++) {
            out(&g, "    over \"agent_%02d\"\n    {\n"
                    "        point3f[] points.timeSamples = {\n"
                    "            %d: [",
                a, f);
            for (int i = 0; i < npts; i++)
                out(&g, "%s(%.4f, %.4f, %.4f)", i ? ", " : "",
                    base[a][0] + (i % 25) * 0.1 + f * 0.05,
                    gen_real(&g, 0, 2), base[a][1] + (i / 25) * 0.1);
            out(&g, "],\n        }\n    }\n");
        }
        out(&g, "}\n\n");
        if (clip_close(&g, path))
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && argc <= 5 && strcmp(argv[1], "clips") == 0) {
        int n_frames = atoi(argv[3]);
        long long mb = argc == 5 ? atoll(argv[4]) : 100;
        if (n_frames <= 0 || n_frames > 9999 || mb <= 0) {
            fprintf(stderr, "ub_gen: FRAMES must be 1..9999, MB positive\n");
            return 2;
        }
        if (clips(argv[2], n_frames, mb) != 0) {
            fprintf(stderr, "ub_gen: cannot write %s: %s\n", argv[2],
                    strerror(errno));
            return 1;
        }
        return 0;
    }
    if (argc < 3 || argc > 4 ||
        (strcmp(argv[1], "arrays") != 0 && strcmp(argv[1], "prims") != 0 &&
         strcmp(argv[1], "frames") != 0)) {
        fprintf(stderr, "usage: ub_gen arrays|prims|frames OUT [MB]\n"
                        "       ub_gen clips DIR FRAMES [MB]\n");
        return 2;
    }
    long long mb = argc == 4 ? atoll(argv[3]) : 100;
    if (mb <= 0) {
        fprintf(stderr, "ub_gen: MB must be positive\n");
        return 2;
    }
    if (strcmp(argv[1], "frames") == 0)
        return frames(argv[2], mb);
    gen g = {fopen(argv[2], "wb"), 0x9E3779B97F4A7C15ULL, 0};
    if (!g.f) {
        fprintf(stderr, "ub_gen: cannot write %s: %s\n", argv[2],
                strerror(errno));
        return 1;
    }
    if (strcmp(argv[1], "arrays") == 0)
        arrays(&g, mb * 1000000LL);
    else
        prims(&g, mb * 1000000LL);
    if (fclose(g.f) != 0) {
        fprintf(stderr, "ub_gen: cannot write %s: %s\n", argv[2],
                strerror(errno));
        remove(argv[2]);
        return 1;
    }
    return 0;
}
