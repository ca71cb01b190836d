/* calibrate.c — fitting the intent temperature (calibrate.h): the negative log-likelihood of
 * held-out intents as a function of T, and a golden-section search for its minimum over
 * 1/T. It knows logits and labels, not models or files: the training loop collects the
 * logits of its dev examples (nlu/train/train.c) and stores the result in the config.
 */
#include <math.h>

#include "nlu/model/model.h"
#include "nlu/train/calibrate.h"

double train_intent_nll(const float *logits, const int *gold, int n, int n_intents, double t)
{
    double sum = 0;
    int used = 0;
    for (int i = 0; i < n; i++) {
        const float *x = logits + (size_t)i * n_intents;
        if (gold[i] < 0)
            continue;
        float mx = x[0];
        for (int c = 1; c < n_intents; c++)
            mx = x[c] > mx ? x[c] : mx;
        double z = 0;
        for (int c = 0; c < n_intents; c++)
            z += exp(((double)x[c] - mx) / t);
        sum += log(z) - ((double)x[gold[i]] - mx) / t;
        used++;
    }
    return used ? sum / used : 0;
}

float train_fit_temperature(const float *logits, const int *gold, int n, int n_intents)
{
    int used = 0;
    for (int i = 0; i < n; i++)
        used += gold[i] >= 0;
    if (!used)
        return 1.0f;
    /* b = 1/T in [1/max, 1/min]; NLL(b) is convex (a log-sum-exp of lines in b minus a line). */
    const double phi = (sqrt(5.0) - 1) / 2;
    double lo = 1 / BERT_MAX_TEMPERATURE, hi = 1 / BERT_MIN_TEMPERATURE;
    double b1 = hi - phi * (hi - lo), b2 = lo + phi * (hi - lo);
    double f1 = train_intent_nll(logits, gold, n, n_intents, 1 / b1);
    double f2 = train_intent_nll(logits, gold, n, n_intents, 1 / b2);
    while (hi - lo > 1e-4) {
        if (f1 <= f2) {
            hi = b2;
            b2 = b1;
            f2 = f1;
            b1 = hi - phi * (hi - lo);
            f1 = train_intent_nll(logits, gold, n, n_intents, 1 / b1);
        } else {
            lo = b1;
            b1 = b2;
            f1 = f2;
            b2 = lo + phi * (hi - lo);
            f2 = train_intent_nll(logits, gold, n, n_intents, 1 / b2);
        }
    }
    double t = 2 / (lo + hi);
    t = t < BERT_MIN_TEMPERATURE ? BERT_MIN_TEMPERATURE : t;
    return (float)(t > BERT_MAX_TEMPERATURE ? BERT_MAX_TEMPERATURE : t);
}
