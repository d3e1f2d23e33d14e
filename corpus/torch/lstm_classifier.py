"""Embedding + stacked LSTM binary classifier on synthetic token sequences.

Exercises: nn.Embedding with padding_idx, nn.LSTM(batch_first=True, num_layers=2,
dropout=...), classifying from the last layer's final hidden state h_n[-1],
BCEWithLogitsLoss on a squeezed logit, Adam, gradient clipping with
clip_grad_norm_, and int64 token inputs of shape (N, MAX_LEN).
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB_SIZE = 500
MAX_LEN = 30
EMBED_DIM = 24
INPUT_SHAPE = (MAX_LEN,)
INPUT_DTYPE = "int64"  # token ids in [0, VOCAB_SIZE)
EPOCHS = 3


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size=VOCAB_SIZE, embed_dim=EMBED_DIM, hidden_size=32, num_layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers, batch_first=True, dropout=0.2)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(hidden_size, 1)

    def forward(self, tokens):
        embedded = self.embedding(tokens)  # (N, T, E)
        output, (h_n, c_n) = self.lstm(embedded)
        # h_n is (num_layers, N, H); the top layer's last step equals output[:, -1]
        last = h_n[-1]
        return self.fc(self.dropout(last)).squeeze(-1)  # one logit per sequence


def build_model(vocab_size=VOCAB_SIZE, embed_dim=EMBED_DIM, hidden_size=32):
    return LSTMClassifier(vocab_size, embed_dim, hidden_size)


def make_data(n=512, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randint(1, VOCAB_SIZE, size=(n, MAX_LEN))
    # "positive" if low-id tokens outnumber high-id tokens in the second half
    second_half = x[:, MAX_LEN // 2 :]
    y = ((second_half < VOCAB_SIZE // 2).sum(axis=1) > MAX_LEN // 4).astype("float32")
    return torch.from_numpy(x.astype("int64")), torch.from_numpy(y)


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = make_data()
    train_ds = TensorDataset(x[:448], y[:448])
    train_loader = DataLoader(train_ds, batch_size=32, shuffle=True)

    model = build_model()
    criterion = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

    for epoch in range(EPOCHS):
        model.train()
        total, correct = 0.0, 0
        for tokens, labels in train_loader:
            optimizer.zero_grad()
            logits = model(tokens)
            loss = criterion(logits, labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            total += loss.item() * tokens.size(0)
            correct += ((logits > 0).float() == labels).sum().item()
        print(f"epoch {epoch + 1}: loss {total / len(train_ds):.4f} acc {correct / len(train_ds):.3f}")

    model.eval()
    with torch.no_grad():
        val_logits = model(x[448:])
        val_loss = criterion(val_logits, y[448:]).item()
        val_acc = ((val_logits > 0).float() == y[448:]).float().mean().item()
    print(f"validation loss {val_loss:.4f} accuracy {val_acc:.3f}")

    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "lstm_classifier.pt")
        torch.save(model.state_dict(), ckpt)
        model = build_model()
        model.load_state_dict(torch.load(ckpt))
        model.eval()
    with torch.no_grad():
        probs = torch.sigmoid(model(x[:6]))
    print("p(positive):", [round(p, 3) for p in probs.tolist()])
